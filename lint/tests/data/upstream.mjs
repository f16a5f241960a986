// Regenerates the `*.upstream` files: upstream's `ai-skill-tool-unresolved`
// findings for a stack, one line each, `path|where|ref|suggestion|kind|severity|rule`.
//
// Node resolves `@objectstack/lint` from this script's folder, not from
// the working directory, so run a copy placed beside the install:
//
//   mkdir -p /tmp/up && (cd /tmp/up && npm install @objectstack/lint@17.4.0)
//   cp lint/tests/data/upstream.mjs /tmp/up/     (then, from the repository root)
//   for f in lint/tests/data/lint/*.json; do node /tmp/up/upstream.mjs "$f" > "${f%.json}.upstream"; done
//   node /tmp/up/upstream.mjs examples/hotcrm-skills.json > lint/tests/data/hotcrm-skills.upstream
import { validateAiToolReferences } from '@objectstack/lint';
import fs from 'fs';

const stack = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
for (const f of validateAiToolReferences(stack)) {
  const suggestion = (f.message.match(/Did you mean "([^"]*)"\?$/) || [])[1] ?? '';
  const ref = (f.message.match(/(?:references tool|tool family) "([^"]*)"/) || [])[1];
  const kind = f.message.includes('subscribes to tool family')
    ? 'wildcard'
    : f.message.includes('does not become an AI tool') ? 'unexposed' : 'fictional';
  console.log([f.path, f.where, ref, suggestion, kind, f.severity, f.rule].join('|'));
}
