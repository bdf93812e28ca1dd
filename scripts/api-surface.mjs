// The published surface of the package: each entry of package.json `exports`, with the names it exports and
// what kind of thing each is (a value: class, function, const, enum; or a type: interface, type), read from the
// sources by the TypeScript compiler. test/architecture/public-api.test.ts compares it with the checked-in
// list test/architecture/public-api.txt, so a change to the surface shows as a diff there and is a decision:
//   node scripts/api-surface.mjs            prints the list
//   node scripts/api-surface.mjs --count    prints each entry's number of values and types
//   node scripts/api-surface.mjs --write    rewrites test/architecture/public-api.txt
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
export const listFile = fileURLToPath(new URL('../test/architecture/public-api.txt', import.meta.url));

/** The published entries: subpath (as a user imports it) to source file, from package.json `exports`. */
export function publishedEntries() {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const entries = [];
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target !== 'object') continue; // ./package.json
    const source = target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
    entries.push({ name: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`, source });
  }
  return entries;
}

/** An alias exported with `export type { ... }` or `export { type ... }` carries no value, whatever it names. */
function typeOnly(symbol) {
  return (symbol.declarations ?? []).some(
    (d) =>
      (ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) ||
      (ts.isNamespaceExport(d) && d.parent.isTypeOnly),
  );
}

/** What kind of export `symbol` is: a value (class, function, enum, const) or a type (interface, type). */
export function kindOf(checker, symbol) {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const f = target.flags;
  if (!typeOnly(symbol)) {
    if (f & ts.SymbolFlags.Class) return 'class';
    if (f & ts.SymbolFlags.Function) return 'function';
    if (f & ts.SymbolFlags.Enum) return 'enum';
    if (f & ts.SymbolFlags.Variable) return 'const';
  }
  if (f & ts.SymbolFlags.Interface || f & ts.SymbolFlags.Class) return 'interface';
  return 'type';
}

export const valueKinds = new Set(['class', 'function', 'enum', 'const']);

/** Each published entry with its exports, sorted by name: `{ name, source, exports: [{ name, kind }] }`. */
export function apiSurface() {
  const entries = publishedEntries();
  const config = ts.getParsedCommandLineOfConfigFile(
    `${root}tsconfig.build.json`,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  // Only the export lists are read, never a type checked: the standard library and @types are not needed.
  const program = ts.createProgram(
    entries.map((e) => `${root}${e.source}`),
    { ...config.options, noLib: true, types: [] },
  );
  const checker = program.getTypeChecker();
  return entries.map((entry) => {
    const file = program.getSourceFile(`${root}${entry.source}`);
    const exports = checker
      .getExportsOfModule(checker.getSymbolAtLocation(file))
      .map((s) => ({ name: s.name, kind: kindOf(checker, s) }));
    exports.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { ...entry, exports };
  });
}

/** The list as checked in: a heading per entry, then one `name kind` line per export. */
export function formatSurface(surface) {
  return (
    surface
      .map((e) => [`# ${e.name} (${e.source})`, ...e.exports.map((x) => `${x.name} ${x.kind}`)].join('\n'))
      .join('\n\n') + '\n'
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const surface = apiSurface();
  if (process.argv.includes('--count')) {
    for (const e of surface) {
      const values = e.exports.filter((x) => valueKinds.has(x.kind)).length;
      console.log(`${e.name}: ${e.exports.length} names (${values} values, ${e.exports.length - values} types)`);
    }
  } else if (process.argv.includes('--write')) {
    writeFileSync(listFile, formatSurface(surface));
  } else {
    process.stdout.write(formatSurface(surface));
  }
}
