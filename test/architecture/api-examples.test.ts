import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kindOf, publishedEntries, valueKinds } from '../../scripts/api-surface.mjs';

/**
 * Every value a package entry exports shows its use in a TSDoc `@example`, and every example compiles against the
 * sources: each is written out as a module of its own that imports the package by name (`vespa-bulk`,
 * `vespa-bulk/report`, ...), mapped to src/ with `paths`, and all of them are type-checked in one program with
 * tsconfig.json's options. A failure names the declaration and the line in src/ the diagnostic points at.
 */
const repo = fileURLToPath(new URL('../..', import.meta.url));
const entries = publishedEntries();

/** Exported values allowed without an example, as `entry: name`: none. The test fails when a name here has one. */
const allowedWithoutExample: string[] = [];

/** One ```ts block of an `@example`: where it stands in src/ and its code. */
interface Example {
  entry: string;
  name: string;
  source: string;
  line: number; // 1-based line in `source` of the example's first code line
  code: string;
}

const configFile = ts.getParsedCommandLineOfConfigFile(
  join(repo, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
)!;
const options: ts.CompilerOptions = {
  ...configFile.options,
  noEmit: true,
  // The examples lie outside the repository, so its @types are named where they are.
  typeRoots: [join(repo, 'node_modules/@types')],
  paths: Object.fromEntries(entries.map((e) => [e.name, [join(repo, e.source)]])),
};
// One host for both programs, so each source file is read and parsed once; doc comments are not parsed (a good
// part of the parsing, most of @types/node is comments): the examples are read from the text (examplesOf).
const host = ts.createCompilerHost(options);
host.jsDocParsingMode = ts.JSDocParsingMode.ParseNone;
const parsed = new Map<string, ts.SourceFile | undefined>();
const getSourceFile = host.getSourceFile.bind(host);
host.getSourceFile = (fileName, languageVersion, onError, create) => {
  const key = `${fileName}\0${typeof languageVersion === 'object' ? languageVersion.impliedNodeFormat : ''}`;
  if (create || !parsed.has(key)) parsed.set(key, getSourceFile(fileName, languageVersion, onError, create));
  return parsed.get(key);
};

/** The code blocks of the `@example` tags in a declaration's doc comment, with the line in src/ each starts on. */
function examplesOf(declaration: ts.Declaration): { line: number; code: string }[] {
  const file = declaration.getSourceFile();
  const statement = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  const doc = ts
    .getLeadingCommentRanges(file.text, statement.pos)
    ?.filter((r) => file.text.startsWith('/**', r.pos))
    .at(-1);
  if (doc === undefined) return [];
  const first = file.getLineAndCharacterOfPosition(doc.pos).line;
  const lines = file.text
    .slice(doc.pos, doc.end)
    .split('\n')
    .map((l) => l.replace(/^\s*(\/\*\*|\*\/|\*)? ?/, ''));
  const found: { line: number; code: string }[] = [];
  let inExample = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('@')) inExample = lines[i].startsWith('@example');
    if (!inExample || !/^```(ts|typescript)\s*$/.test(lines[i])) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (end < 0) throw new Error(`${file.fileName}:${first + i + 1}: an example's code block is not closed`);
    found.push({ line: first + i + 2, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return found;
}

/** Each entry's exported values, and the examples on them. */
function collect(program: ts.Program): { entry: string; name: string; examples: Example[] }[] {
  const checker = program.getTypeChecker();
  return entries.flatMap((entry) => {
    const file = program.getSourceFile(join(repo, entry.source))!;
    return checker.getExportsOfModule(checker.getSymbolAtLocation(file)!).flatMap((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      if (!valueKinds.has(kindOf(checker, symbol))) return [];
      const examples = (target.declarations ?? []).flatMap((d) =>
        examplesOf(d).map((x) => ({
          entry: entry.name,
          name: symbol.name,
          source: d.getSourceFile().fileName.slice(repo.length),
          ...x,
        })),
      );
      return [{ entry: entry.name, name: symbol.name, examples }];
    });
  });
}

describe('the public API examples', () => {
  let dir: string;
  let sources: ts.Program;
  let values: ReturnType<typeof collect>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vespa-bulk-examples-'));
    sources = ts.createProgram(
      entries.map((e) => join(repo, e.source)),
      options,
      host,
    );
    values = collect(sources);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('are there, one at least for each exported value of each entry', () => {
    expect(values.length).toBeGreaterThan(50);
    const without = values.filter((v) => v.examples.length === 0).map((v) => `${v.entry}: ${v.name}`);
    expect(without, 'exported values without a TSDoc @example (or with allowance left over)').toEqual(
      allowedWithoutExample,
    );
  });

  it('type-check against the sources, as a user of the package would write them', () => {
    const examples = values.flatMap((v) => v.examples);
    const files = new Map<string, Example>();
    for (const [i, x] of examples.entries()) {
      // .mts: an ES module however the folder is set up; `export {}` keeps an example without imports a module too.
      const file = join(dir, `${String(i).padStart(3, '0')}-${x.name}.mts`);
      writeFileSync(file, `${x.code}\nexport {};\n`);
      files.set(file, x);
    }
    const program = ts.createProgram([...sources.getRootFileNames(), ...files.keys()], options, host, sources);
    const problems = [...files].flatMap(([file, x]) =>
      [
        ...program.getSyntacticDiagnostics(program.getSourceFile(file)),
        ...program.getSemanticDiagnostics(program.getSourceFile(file)),
      ].map((d) => {
        const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : 0;
        return `${x.entry} ${x.name} (${x.source}:${x.line + line}): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      }),
    );
    expect(examples.length).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });
});
