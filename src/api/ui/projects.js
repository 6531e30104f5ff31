// @ts-check
// Projects: list (labels, a root gone missing), add, trust / untrust.
import { get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, field, h, table } from './dom.js';
import { can, currentUser, needsRole } from './session.js';

/** @import { ViewContext } from './router.js' */
/** @import { ErrorBox } from './dom.js' */
/** @import { AnswerOf, BodyIn, routes } from '../../core/contract/index.js' */
/** @typedef {AnswerOf<'listProjects'>[number]} Project */

/**
 * @param {HTMLElement} container
 * @param {ViewContext} context
 */
export async function projectsView(container, { signal }) {
  const listErrors = errorBox('projects-error');
  // Adding, trusting and untrusting are for admins; others get the list and a note.
  const user = await currentUser(signal);
  const admin = can(user, 'admin');
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Projects')),
    h(
      'p',
      { class: 'lede' },
      'Project directories plugins may look at. Only trusted projects are inspected or operated on.',
    ),
    admin ? addForm() : needsRole(user, 'admin', 'Adding or trusting a project', 'projects-needs-role'),
    listErrors.el,
  );
  /** @type {AnswerOf<'listProjects'>} */
  const projects = await get('/projects', signal);
  const search = h('input', {
    type: 'search',
    placeholder: 'Search by id, name, label or path',
    testid: 'projects-search',
  });
  const pageInfo = h('span', { class: 'muted', testid: 'projects-page' });
  const prev = h('button', { type: 'button', testid: 'projects-prev' }, '← Previous');
  const next = h('button', { type: 'button', testid: 'projects-next' }, 'Next →');
  const listBody = h('div', {});
  let page = 0;
  const render = () => {
    const needle = search.value.trim().toLowerCase();
    const found = needle
      ? projects.filter((p) =>
          [p.id, p.displayName, p.root, ...p.labels].some((text) =>
            String(text).toLowerCase().includes(needle),
          ),
        )
      : projects;
    const pages = Math.max(1, Math.ceil(found.length / PAGE_SIZE));
    page = Math.min(page, pages - 1);
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
    pageInfo.textContent = `page ${page + 1} of ${pages} · ${found.length} matching`;
    listBody.replaceChildren(
      table(
        ['Project', 'Root', 'Trust', 'Action'],
        found
          .slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)
          .map((project) => row(project, listErrors, admin)),
        { testid: 'projects-table', class: 'data' },
      ),
    );
  };
  search.addEventListener('input', () => {
    page = 0;
    render();
  });
  prev.addEventListener('click', () => ((page -= 1), render()));
  next.addEventListener('click', () => ((page += 1), render()));
  render();
  container.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'projects-list-title' },
      h('h2', { id: 'projects-list-title' }, `Registered projects (${projects.length})`),
      field('Search projects', search),
      listBody,
      h('div', { class: 'actions' }, prev, pageInfo, next),
    ),
  );
}

const PAGE_SIZE = 50;

/**
 * @param {Project} project
 * @param {ErrorBox} listErrors
 * @param {boolean} admin
 */
function row(project, listErrors, admin) {
  const trusted = badge(project.trusted ? 'trusted' : 'not trusted');
  const name = h(
    'span',
    {},
    h(
      'a',
      { href: `#/projects/${encodeURIComponent(project.id)}`, testid: `project-link-${project.id}` },
      project.displayName,
    ),
    h('span', { class: 'sub' }, project.id),
    ...(project.labels.length > 0
      ? [h('span', { class: 'sub', testid: `project-labels-${project.id}` }, project.labels.join(' · '))]
      : []),
  );
  // Nothing is called on a project whose root is gone (PROJECT_ROOT_MISSING): say so where it is listed.
  const root = h(
    'span',
    {},
    h('code', {}, project.root),
    ...(project.rootMissing ? [' ', badge('root missing', `project-root-missing-${project.id}`)] : []),
  );
  if (!admin) return [name, root, trusted, ''];
  const button = h(
    'button',
    { type: 'button', testid: `project-${project.trusted ? 'untrust' : 'trust'}-${project.id}` },
    project.trusted ? 'Untrust' : 'Trust',
  );
  button.addEventListener('click', () =>
    busy(button, listErrors, async () => {
      const verb = project.trusted ? 'untrust' : 'trust';
      await post(`/projects/${encodeURIComponent(project.id)}/${verb}`);
      flash(`Project ${project.id}: ${verb === 'trust' ? 'trusted' : 'no longer trusted'}.`);
      rerender();
    }),
  );
  return [name, root, trusted, button];
}

function addForm() {
  const errors = errorBox('project-add-error');
  const path = h('input', {
    type: 'text',
    class: 'mono',
    required: true,
    testid: 'project-path',
    placeholder: '/home/me/src/app',
  });
  const id = h('input', { type: 'text', testid: 'project-id' });
  const name = h('input', { type: 'text', testid: 'project-name' });
  const trust = h('input', { type: 'checkbox', id: 'project-trust', testid: 'project-trust' });
  const button = h('button', { type: 'submit', class: 'primary', testid: 'project-add' }, 'Add project');
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'project-add-title' },
    h('h2', { id: 'project-add-title' }, 'Add a project'),
    h(
      'div',
      { class: 'row' },
      field('Absolute path', path),
      field('Id (optional)', id),
      field('Display name (optional)', name),
    ),
    h('div', { class: 'check' }, trust, h('label', { for: 'project-trust' }, 'Trust this project now')),
    h('div', { class: 'actions' }, button),
    errors.el,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    /** @type {BodyIn<typeof routes.addProject>} */
    const body = { path: path.value.trim() };
    if (id.value.trim()) body.id = id.value.trim();
    if (name.value.trim()) body.name = name.value.trim();
    if (trust.checked) body.trust = true;
    void busy(button, errors, async () => {
      /** @type {AnswerOf<'addProject'>} */
      const project = await post('/projects', body);
      flash(`Added project ${project.id}${project.trusted ? ' (trusted)' : ''}.`);
      rerender();
    });
  });
  return form;
}
