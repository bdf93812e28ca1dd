import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as simulator from '../../src/simulator/index.js';
import * as report from '../../src/report/index.js';
import * as bench from '../../src/bench/index.js';

/**
 * The published contract: the names each entry of package.json `exports` offers, and whether each is a value or
 * a type. The list is checked in (public-api.txt, written by scripts/api-surface.mjs), so a change to the surface
 * shows as a diff of it and is made on purpose: `node scripts/api-surface.mjs --write` after deciding. What only
 * the CLI needs stays off it: the CLI imports modules by path (test/architecture/imports.test.ts).
 */
const repo = fileURLToPath(new URL('../..', import.meta.url));
const checkedIn = readFileSync(new URL('public-api.txt', import.meta.url), 'utf8');
const valueKinds = new Set(['class', 'function', 'enum', 'const']);

/** The list's entries: heading `# name (source)`, then `export kind` lines. */
function entriesOf(list: string): Map<string, { source: string; exports: { name: string; kind: string }[] }> {
  const entries = new Map<string, { source: string; exports: { name: string; kind: string }[] }>();
  for (const block of list.trim().split(/\n\n/)) {
    const [heading, ...lines] = block.split('\n');
    const m = /^# (\S+) \((\S+)\)$/.exec(heading);
    if (!m) throw new Error(`not a heading: ${heading}`);
    entries.set(m[1], { source: m[2], exports: lines.map((l) => ({ name: l.split(' ')[0], kind: l.split(' ')[1] })) });
  }
  return entries;
}

describe('the public API', () => {
  const entries = entriesOf(checkedIn);

  it('is what the checked-in list says, name by name and kind by kind (rewrite it with scripts/api-surface.mjs --write)', () => {
    const now = execFileSync(process.execPath, ['scripts/api-surface.mjs'], { cwd: repo, encoding: 'utf8' });
    expect(now).toBe(checkedIn);
  });

  it('lists each entry sorted, with a kind the script knows', () => {
    expect(entries.size).toBe(4);
    for (const { exports } of entries.values()) {
      const names = exports.map((x) => x.name);
      expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      for (const x of exports)
        expect(['class', 'function', 'enum', 'const', 'interface', 'type'], x.name).toContain(x.kind);
    }
  });

  it('has as values exactly what each entry exports at run time', () => {
    const loaded: Record<string, Record<string, unknown>> = {
      'vespa-bulk': root,
      'vespa-bulk/simulator': simulator,
      'vespa-bulk/report': report,
      'vespa-bulk/bench': bench,
    };
    expect([...entries.keys()].sort()).toEqual(Object.keys(loaded).sort());
    for (const [name, { exports }] of entries) {
      expect(
        exports.filter((x) => valueKinds.has(x.kind)).map((x) => x.name),
        name,
      ).toEqual(Object.keys(loaded[name]).sort());
    }
  });

  it('keeps what only the CLI uses off the root entry', () => {
    const names = new Set(entries.get('vespa-bulk')!.exports.map((x) => x.name));
    for (const cliOnly of [
      'splitPositionals',
      'fieldsTextOf',
      'isInlinePem',
      'redact',
      'maskHeaders',
      'writeFileAtomically',
      'rememberSession',
      'checkResumable',
      'checkFeedOptions',
      'startVisit',
    ]) {
      expect(names.has(cliOnly), cliOnly).toBe(false);
    }
  });

  it('is published through package.json `exports` alone: the listed entries and package.json, not the CLI', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name: string;
      exports: Record<string, string | { types: string; default: string }>;
      bin: Record<string, string>;
    };
    const published = Object.entries(manifest.exports).flatMap(([subpath, target]) =>
      typeof target === 'string'
        ? []
        : [
            [
              subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
              target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'),
            ],
          ],
    );
    expect(Object.fromEntries(published)).toEqual(
      Object.fromEntries([...entries].map(([name, e]) => [name, e.source])),
    );
    expect(Object.values(manifest.exports).filter((t) => typeof t === 'string')).toEqual(['./package.json']);
    // The CLI's entry is the bin's, reached by path and not as an export of the package.
    expect(readFileSync(new URL(`../../${manifest.bin['vespa-bulk']}`, import.meta.url), 'utf8')).toContain(
      'src/cli/main.ts',
    );
    expect(JSON.stringify(manifest.exports)).not.toMatch(/cli/);
  });
});
