// /api/v1/projects: the project registry and its trust.
import { z } from 'zod';
import type { ApiDeps, RouteKit } from '../route-kit.js';
import * as responses from '../responses.js';
import { bodies } from '../schemas.js';

export function registerProjectRoutes({ route, body, param, actorOf }: RouteKit, { runtime }: ApiDeps) {
  const { core } = runtime;
  route('GET', '/projects', 'viewer', 'list projects', () => core.projects.list(), {
    response: z.array(responses.project),
  });
  route(
    'POST',
    '/projects',
    'admin',
    'add a project',
    async (request) => {
      const input = body(bodies.addProject, request);
      return core.projects.add(input.path, input, actorOf(request));
    },
    { body: bodies.addProject, status: 201, response: responses.project },
  );
  route(
    'POST',
    '/projects/scan',
    'admin',
    'add each immediate subdirectory',
    async (request) => {
      const input = body(bodies.scanProjects, request);
      return core.projects.scan(input.dir, input, actorOf(request));
    },
    { body: bodies.scanProjects, status: 201, response: z.array(responses.project) },
  );
  for (const [name, trusted] of [
    ['trust', true],
    ['untrust', false],
  ] as const) {
    route(
      'POST',
      `/projects/:id/${name}`,
      'admin',
      `${name} a project`,
      async (request) => {
        body(bodies.empty, request);
        return core.projects.setTrusted(param(request, 'id'), trusted, actorOf(request));
      },
      { body: bodies.empty, response: responses.project },
    );
  }
  route(
    'DELETE',
    '/projects/:id',
    'admin',
    'forget a project',
    async (request) => core.projects.remove(param(request, 'id'), actorOf(request)),
    { response: responses.project },
  );
}
