import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/** The TypeScript examples of the pages a library user starts from. */
const pages = ['README.md', 'docs/library.md'];

const entry: Record<string, string> = {
  'vespa-bulk': 'src/index.js',
  'vespa-bulk/simulator': 'src/simulator/index.js',
  'vespa-bulk/report': 'src/report/index.js',
  'vespa-bulk/bench': 'src/bench/index.js',
};

/** Each ```ts block of a page, its imports of the package pointed at the sources. */
function snippets(page: string): string[] {
  const text = readFileSync(page, 'utf8');
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
    m[1].replace(/from '(vespa-bulk(?:\/\w+)?)'/g, (_, name: string) => `from '${resolve(entry[name])}'`),
  );
}

describe('the pages’ TypeScript examples', () => {
  // A user copies them into a strict project: each must compile there as written (a possibly-undefined field
  // read, a misspelt option, a name the package no longer exports all fail here).
  it('compile under strict TypeScript against the package’s types', () => {
    const dir = mkdtempSync(join(resolve('test'), '.snippets-'));
    try {
      const files = pages.flatMap((page) =>
        snippets(page).map((code, i) => {
          const file = join(dir, `${page.replace(/\W/g, '_')}_${i}.mts`);
          writeFileSync(file, `${code}\nexport {};\n`);
          return file;
        }),
      );
      expect(files.length).toBeGreaterThanOrEqual(pages.length);
      const program = ts.createProgram(files, {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        skipLibCheck: true,
        types: ['node'],
      });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .filter((d) => d.file === undefined || files.includes(resolve(d.file.fileName)))
        .map((d) => {
          const where = d.file?.getLineAndCharacterOfPosition(d.start ?? 0);
          return `${d.file?.fileName ?? ''}:${(where?.line ?? 0) + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
        });
      expect(problems).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
