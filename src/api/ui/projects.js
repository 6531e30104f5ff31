// Projects: list, add, trust / untrust.
import { get, post } from './api.js';
import { flash, rerender } from './router.js';
import { badge, busy, errorBox, field, h, table } from './dom.js';

export async function projectsView(container, { signal }) {
  const listErrors = errorBox('projects-error');
  container.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Projects')),
    h(
      'p',
      { class: 'lede' },
      'Project directories plugins may look at. Only trusted projects are inspected or operated on.',
    ),
    addForm(),
    listErrors.el,
  );
  const projects = await get('/projects', signal);
  container.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'projects-list-title' },
      h('h2', { id: 'projects-list-title' }, `Registered projects (${projects.length})`),
      table(
        ['Project', 'Root', 'Trust', 'Action'],
        projects.map((project) => {
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
          return [
            h('span', {}, project.displayName, h('span', { class: 'sub' }, project.id)),
            h('code', {}, project.root),
            badge(project.trusted ? 'trusted' : 'not trusted'),
            button,
          ];
        }),
        { testid: 'projects-table', class: 'data' },
      ),
    ),
  );
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
    const body = { path: path.value.trim() };
    if (id.value.trim()) body.id = id.value.trim();
    if (name.value.trim()) body.name = name.value.trim();
    if (trust.checked) body.trust = true;
    void busy(button, errors, async () => {
      const project = await post('/projects', body);
      flash(`Added project ${project.id}${project.trusted ? ' (trusted)' : ''}.`);
      rerender();
    });
  });
  return form;
}
