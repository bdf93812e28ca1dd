import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in the README, ARCHITECTURE.md, docs/*.md and src/simulator/README.md names a file that
 * exists, and a `#fragment` names a heading of that file (as GitHub makes its anchors). docs/api/ is generated
 * and not checked here.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = [
  'README.md',
  'ARCHITECTURE.md',
  'src/simulator/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/.test(l));
}

describe('documentation links', () => {
  for (const page of pages) {
    it(`${page}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const link of linksOf(join(root, page))) {
        const [path = '', fragment] = link.split('#');
        const target = path === '' ? join(root, page) : resolve(dirname(join(root, page)), path);
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (
          fragment !== undefined &&
          statSync(target).isFile() &&
          target.endsWith('.md') &&
          !anchorsOf(target).has(fragment)
        ) {
          broken.push(`${link}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
