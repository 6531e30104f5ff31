// The largest functions under a folder (default src/), in lines, with their
// parameter counts: `node scripts/function-sizes.mjs [dir] [how many]`.
// The house's second pass measured its call path with it.
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? 'src';
const most = Number(process.argv[3] ?? 10);

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function nameOf(node) {
  if (node.name) return node.name.getText();
  if (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent))
    return node.parent.name.getText();
  return '(anonymous)';
}

const rows = [];
for (const file of sourceFiles(root)) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.end).line + 1;
      rows.push({
        lines: last - first + 1,
        params: node.parameters.length,
        name: nameOf(node),
        where: `${file}:${first}`,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
rows.sort((a, b) => b.lines - a.lines);
for (const row of rows.slice(0, most)) {
  console.log(`${String(row.lines).padStart(4)} lines  ${row.params} params  ${row.name}  ${row.where}`);
}
