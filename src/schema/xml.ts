import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * XML for application packages (services.xml, validation-overrides.xml...), read with fast-xml-parser and
 * turned into a small element tree. Entities and DTDs do nothing: the parser's entity processing is off, so a
 * DOCTYPE's declarations are never expanded and no external entity is ever fetched; a DOCTYPE with an internal
 * subset (where entity declarations live) is refused with a clear message, a bare one is ignored. Only the
 * predefined entities (`&amp;` ...) and character references are decoded, here, once.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** Character data directly inside this element, entities decoded, concatenated. */
  text: string;
  line: number;
}

export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line}, column ${column}: ${message}`);
    this.name = 'XmlSyntaxError';
  }
}

/** fast-xml-parser's ordered output: one key (the tag, '#text' or '#cdata'), ':@' for attributes, and metadata. */
type OrderedNode = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  allowBooleanAttributes: false,
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
  captureMetaData: true,
});

const metadataKey = XMLParser.getMetaDataSymbol();
const predefinedEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Parses `source` and returns its root element; throws XmlSyntaxError naming line and column. */
export function parseXml(source: string): XmlElement {
  const lines = lineStarts(source);
  const fail = (message: string, at: number): never => {
    const line = lineOf(lines, at);
    throw new XmlSyntaxError(message, line, at - lines[line - 1] + 1);
  };
  checkProlog(source, fail);
  const verdict = XMLValidator.validate(source, { allowBooleanAttributes: false });
  if (verdict !== true) {
    const { line, col } = verdict.err;
    const at = (lines[line - 1] ?? 0) + Math.max(0, (col ?? 1) - 1);
    fail(describeInvalid(verdict.err.code, verdict.err.msg, source, at), at);
  }
  const nodes = parser.parse(source) as OrderedNode[];
  let root: XmlElement | undefined;
  for (const node of nodes) {
    const name = tagOf(node);
    if (name === '#text') {
      if (String(textOf(node)).trim() !== '') fail('text outside the root element', 0);
    } else if (name === '#comment') checkComment(node, source, fail);
    else if (name !== '#cdata') {
      const element = toElement(node, name, source, lines, fail);
      if (root !== undefined) fail(`a second root element <${name}>; only one is allowed`, offsetOf(node));
      root = element;
    }
  }
  if (root === undefined) fail('no root element', 0);
  return root!;
}

/** Direct children named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}

type Fail = (message: string, at: number) => never;

function toElement(node: OrderedNode, name: string, source: string, lines: number[], fail: Fail): XmlElement {
  const start = offsetOf(node);
  const attributes: Record<string, string> = {};
  for (const [key, raw] of Object.entries(node[':@'] ?? {})) {
    if (raw.includes('<')) fail(`'<' is not allowed in the value of attribute '${key}'`, start);
    attributes[key] = decodeEntities(raw, start, fail);
  }
  const element: XmlElement = { name, attributes, children: [], text: '', line: lineOf(lines, start) };
  for (const child of node[name] as OrderedNode[]) {
    const kind = tagOf(child);
    if (kind === '#text') element.text += decodeEntities(String(textOf(child)), start, fail);
    else if (kind === '#cdata') element.text += String(textOf((child['#cdata'] as OrderedNode[])[0] ?? {}));
    else if (kind === '#comment') checkComment(child, source, fail);
    else element.children.push(toElement(child, kind, source, lines, fail));
  }
  return element;
}

function tagOf(node: OrderedNode): string {
  for (const key of Object.keys(node)) if (key !== ':@') return key;
  return '#text';
}

/** The text of a text node: the parser keeps values as strings (parseTagValue off), numbers only if that changes. */
function textOf(node: OrderedNode): string | number {
  return (node['#text'] as string | number | undefined) ?? '';
}

function offsetOf(node: OrderedNode): number {
  return (node[metadataKey as unknown as string] as { startIndex?: number } | undefined)?.startIndex ?? 0;
}

function checkComment(node: OrderedNode, source: string, fail: Fail): void {
  const text = String(textOf((node['#comment'] as OrderedNode[])[0] ?? {}));
  if (text.includes('--')) fail("'--' is not allowed inside a comment", Math.max(0, source.indexOf(text)));
}

/** Predefined entities and character references; anything else (a DOCTYPE's entities included) is an error. */
function decodeEntities(raw: string, at: number, fail: Fail): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(/&([^;&\s<]*);?/g, (match, name: string) => {
    if (!match.endsWith(';')) fail(`'&' must start an entity reference such as &amp;`, at);
    if (/^#x[0-9a-fA-F]+$/.test(name)) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (/^#[0-9]+$/.test(name)) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const value = predefinedEntities[name];
    if (value === undefined)
      fail(`unknown entity &${name}; (only &amp; &lt; &gt; &quot; &apos; and character references are read)`, at);
    return value;
  });
}

/**
 * The prolog before the root element: a DOCTYPE with an internal subset is refused before any parsing, so entity
 * declarations (billion laughs, external SYSTEM entities) never reach a parser.
 */
function checkProlog(source: string, fail: Fail): void {
  let pos = source.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (pos < source.length && /\s/.test(source[pos])) pos++;
    if (source.startsWith('<?', pos)) pos = skipPast(source, pos, '?>');
    else if (source.startsWith('<!--', pos)) pos = skipPast(source, pos, '-->');
    else if (source.startsWith('<!DOCTYPE', pos)) {
      let quote: string | undefined;
      for (let i = pos + 9; i < source.length; i++) {
        const c = source[i];
        if (quote !== undefined) {
          if (c === quote) quote = undefined;
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[')
          fail('DOCTYPE with an internal subset is not supported (entity declarations are not read)', pos);
        else if (c === '>') return;
      }
      fail('DOCTYPE is not closed', pos);
    } else return;
    if (pos < 0) return;
  }
}

function skipPast(source: string, pos: number, end: string): number {
  const found = source.indexOf(end, pos);
  return found < 0 ? -1 : found + end.length;
}

/** The validator's findings in this module's words (the package messages and tests rely on them). */
function describeInvalid(code: string, msg: string, source: string, at: number): string {
  let m: RegExpExecArray | null;
  if (
    (m = /^Expected closing tag '([^']+)' \(opened in line (\d+).*instead of closing tag '([^']+)'/.exec(msg)) !== null
  )
    return `closing tag </${m[3]}> does not match <${m[1]}> opened on line ${m[2]}`;
  if ((m = /^Unclosed tag '([^']+)'/.exec(msg)) !== null) return `element <${m[1]}> is not closed`;
  if ((m = /^Closing tag '([^']+)' has not been opened/.exec(msg)) !== null)
    return `closing tag </${m[1]}> without an opening tag`;
  if ((m = /^Attribute '([^']+)' is repeated/.exec(msg)) !== null) return `attribute '${m[1]}' appears twice`;
  if ((m = /^Attribute '([^']+)' is without value/.exec(msg)) !== null)
    return `value of attribute '${m[1]}' must be quoted`;
  if ((m = /^boolean attribute '([^']+)' is not allowed/.exec(msg)) !== null) return `attribute '${m[1]}' has no value`;
  if (code === 'InvalidChar' && msg.startsWith("char '&'")) return `'&' must start an entity reference such as &amp;`;
  if (code === 'InvalidChar' && !source.slice(0, at).includes('<')) return 'text outside the root element';
  if (msg.startsWith('Start tag expected')) return 'no root element';
  return msg.replace(/\.$/, '');
}

function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line of `offset`. */
function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}
