// The types of api-surface.mjs, for the tests that import it (test/architecture/api-examples.test.ts).
import type ts from 'typescript';

export const listFile: string;
/** The published entries: subpath (as a user imports it) to source file, from package.json `exports`. */
export function publishedEntries(): { name: string; source: string }[];
export const valueKinds: Set<string>;
/** What kind of export `symbol` is: a value (class, function, enum, const) or a type (interface, type). */
export function kindOf(checker: ts.TypeChecker, symbol: ts.Symbol): 'class' | 'function' | 'enum' | 'const' | 'interface' | 'type';
/** Each published entry with its exports, sorted by name. */
export function apiSurface(): { name: string; source: string; exports: { name: string; kind: string }[] }[];
/** The list as checked in: a heading per entry, then one `name kind` line per export. */
export function formatSurface(surface: ReturnType<typeof apiSurface>): string;
