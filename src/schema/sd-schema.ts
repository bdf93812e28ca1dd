/**
 * Just enough of the schema (.sd) language to validate a package and to compare two deployments: the schema
 * name, its document, and each field's type and indexing statement. Rank profiles, fieldsets and the rest are
 * brace-matched and otherwise ignored.
 */
export interface SchemaField {
  name: string;
  /** Type with whitespace removed, e.g. `map<string,int>`. */
  type: string;
  /** The indexing statement, whitespace-normalised; '' when none. */
  indexing: string;
  /** Which of `index`, `attribute`, `summary` the indexing statement names. */
  aspects: string[];
  /** false for fields declared outside the document block (derived at indexing time). */
  inDocument: boolean;
}

export interface Schema {
  name: string;
  documentName: string;
  fields: Map<string, SchemaField>;
  /** Struct types declared in the document (or the schema), each field's name to its type (whitespace removed). */
  structs: Map<string, Map<string, string>>;
  /** Documents this one inherits (`document a inherits b, c`), whose fields and structs it has too. */
  inherits: string[];
}

export class SchemaError extends Error {
  override name = 'SchemaError';
}

interface Block {
  header: string;
  body: string;
  depth: number;
  parent: Block | undefined;
}

/** Parses one .sd file; `file` is its package path and is used in messages. */
export function parseSchema(source: string, file: string): Schema {
  const blocks = matchBraces(stripComments(source), file);
  const top = blocks.filter((b) => b.depth === 0);
  const schemaBlock = top.find((b) => /^(schema|search)\s+\S+/.test(b.header));
  if (!schemaBlock) throw new SchemaError(`${file}: no 'schema <name> { ... }' declaration`);
  const name = schemaBlock.header.split(/\s+/)[1];
  const documentBlocks = blocks.filter((b) => b.parent === schemaBlock && /^document(\s|$)/.test(b.header));
  if (documentBlocks.length === 0)
    throw new SchemaError(`${file}: schema '${name}' does not declare a document ('document ${name} { ... }')`);
  const documentBlock = documentBlocks[0];
  const documentName = documentBlock.header.split(/\s+/)[1] ?? name;
  const inheritsMatch = /\binherits\s+(.+)$/.exec(documentBlock.header);
  const inherits = inheritsMatch ? inheritsMatch[1].split(/[\s,]+/).filter((n) => n !== '') : [];
  const structs = new Map<string, Map<string, string>>();
  for (const block of blocks) {
    const sm = /^struct\s+(\S+)/.exec(block.header);
    if (!sm || (block.parent !== documentBlock && block.parent !== schemaBlock)) continue;
    const members = new Map<string, string>();
    for (const member of blocks) {
      if (member.parent !== block) continue;
      const fm = /^field\s+(\S+)\s+type\s+(.+)$/.exec(member.header);
      if (fm) members.set(fm[1], fm[2].replace(/\s+/g, ''));
    }
    structs.set(sm[1], members);
  }
  const fields = new Map<string, SchemaField>();
  for (const block of blocks) {
    if (block.parent !== documentBlock && block.parent !== schemaBlock) continue;
    const m = /^field\s+(\S+)\s+type\s+(.+)$/.exec(block.header);
    if (!m) {
      if (/^field(\s|$)/.test(block.header))
        throw new SchemaError(`${file}: malformed field declaration '${block.header}'`);
      continue;
    }
    const indexing = readIndexing(block.body);
    fields.set(m[1], {
      name: m[1],
      type: m[2].replace(/\s+/g, ''),
      indexing,
      aspects: ['attribute', 'index', 'summary'].filter((a) => new RegExp(`\\b${a}\\b`).test(indexing)),
      inDocument: block.parent === documentBlock,
    });
  }
  return { name, documentName, fields, structs, inherits };
}

function readIndexing(fieldBody: string): string {
  // String literals may hold braces; their content never names an aspect.
  const body = fieldBody.replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
  const block = /\bindexing\s*\{([^}]*)\}/.exec(body);
  const line = /\bindexing\s*:\s*([^\n]*)/.exec(body);
  const raw = block?.[1] ?? line?.[1] ?? '';
  return raw.replace(/\s+/g, ' ').trim();
}

/** Replaces `#`, `//` and block comments by spaces (newlines kept), leaving string literals alone. */
function stripComments(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === '"') {
      const end = findStringEnd(source, i);
      out += source.slice(i, end);
      i = end;
    } else if (ch === '#' || source.startsWith('//', i)) {
      while (i < source.length && source[i] !== '\n') {
        out += ' ';
        i++;
      }
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

function findStringEnd(source: string, start: number): number {
  let i = start + 1;
  while (i < source.length && source[i] !== '"' && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
  return Math.min(i + 1, source.length);
}

/** Every `header { body }` block; the header is the last non-empty line before the brace. */
function matchBraces(source: string, file: string): Block[] {
  const blocks: Block[] = [];
  const open: { header: string; start: number; block: Block }[] = [];
  let segmentStart = 0;
  // Braces inside parentheses belong to a type, as in `tensor(key{})`, and open no block.
  let parens = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '"') {
      i = findStringEnd(source, i) - 1;
    } else if (ch === '(') {
      parens++;
    } else if (ch === ')') {
      parens = Math.max(0, parens - 1);
    } else if (parens > 0) {
      continue;
    } else if (ch === '{') {
      const lines = source
        .slice(segmentStart, i)
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
      const header = (lines[lines.length - 1] ?? '').replace(/\s+/g, ' ');
      const block: Block = { header, body: '', depth: open.length, parent: open[open.length - 1]?.block };
      open.push({ header, start: i + 1, block });
      segmentStart = i + 1;
    } else if (ch === '}') {
      const top = open.pop();
      if (!top) throw new SchemaError(`${file}: line ${lineOf(source, i)}: '}' without a matching '{'`);
      top.block.body = source.slice(top.start, i);
      blocks.push(top.block);
      segmentStart = i + 1;
    }
  }
  if (open.length > 0) throw new SchemaError(`${file}: '${open[open.length - 1].header} {' is never closed`);
  return blocks.sort((a, b) => a.depth - b.depth);
}

function lineOf(source: string, index: number): number {
  return source.slice(0, index).split('\n').length;
}
