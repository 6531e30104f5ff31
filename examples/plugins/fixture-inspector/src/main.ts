// fixture-inspector: reports which well-known files a project root holds, and
// offers one harmless action, fixture.echo, that returns its input.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PluginError, serve, type Fact, type Manifest } from '@switchyard/plugin-sdk';
import manifest from '../plugin.json' with { type: 'json' };

const DETECTED = ['package.json', 'go.mod', '.switchyard/project.yml'];

void serve(manifest as Manifest, {
  inspect({ project }) {
    if (project.root === undefined) {
      throw new PluginError('fixture-inspector needs the project.files.read scope to look at project files');
    }
    const root = project.root;
    const facts: Fact[] = DETECTED.filter((name) => existsSync(join(root, name))).map((name) => ({
      id: `file.${name.split('/').pop()}`,
      label: 'Detected file',
      value: name,
      source: name,
    }));
    return {
      summary: `${facts.length} known file${facts.length === 1 ? '' : 's'} in ${project.displayName}`,
      facts,
      actions: [
        {
          id: 'fixture.echo',
          name: 'Echo',
          description: 'Returns its input unchanged; changes nothing.',
          risk: 'none',
        },
      ],
    };
  },
  operate({ action, input }) {
    if (action !== 'fixture.echo')
      throw new PluginError(`unknown action ${action}; this plugin offers fixture.echo`);
    return { status: 'succeeded', summary: 'echoed the input', output: input };
  },
});
