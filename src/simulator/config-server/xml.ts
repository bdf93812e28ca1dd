/**
 * A small XML reader for application packages: it checks well-formedness (one root, nested tags, quoted and
 * unique attributes, known entities, closed comments and CDATA) and returns an element tree. No XML parser is
 * installed and services.xml only needs elements and attributes, so namespaces, DTD internal subsets and
 * external entities are deliberately not supported (a DOCTYPE is skipped).
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

const nameStart = /[A-Za-z_:\u00C0-\uFFFF]/;
const nameChar = /[A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFF]/;
const predefinedEntities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Parses `source` and returns its root element; throws XmlSyntaxError naming line and column. */
export function parseXml(source: string): XmlElement {
  let pos = source.charCodeAt(0) === 0xfeff ? 1 : 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;

  const fail = (message: string, at = pos): never => {
    const before = source.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new XmlSyntaxError(message, line, column);
  };
  const lineAt = (at: number): number => source.slice(0, at).split('\n').length;

  const readName = (): string => {
    const start = pos;
    if (!nameStart.test(source[pos] ?? '')) fail(`expected a name, found ${describe(source[pos])}`);
    pos++;
    while (pos < source.length && nameChar.test(source[pos]!)) pos++;
    return source.slice(start, pos);
  };
  const skipSpace = (): void => {
    while (pos < source.length && /\s/.test(source[pos]!)) pos++;
  };
  const decode = (raw: string, offset: number): string =>
    raw.replace(/&([^;&\s<]*);?/g, (match, name: string, index: number) => {
      if (!match.endsWith(';')) fail(`'&' must start an entity reference such as &amp;`, offset + index);
      if (name.startsWith('#x') && /^#x[0-9a-fA-F]+$/.test(name)) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (/^#[0-9]+$/.test(name)) return String.fromCodePoint(parseInt(name.slice(1), 10));
      const value = predefinedEntities[name];
      if (value === undefined) fail(`unknown entity &${name};`, offset + index);
      return value!;
    });

  while (pos < source.length) {
    const lt = source.indexOf('<', pos);
    const textEnd = lt === -1 ? source.length : lt;
    if (textEnd > pos) {
      const text = source.slice(pos, textEnd);
      const parent = stack[stack.length - 1];
      if (parent) parent.text += decode(text, pos);
      else if (text.trim() !== '') fail('text outside the root element');
      pos = textEnd;
      continue;
    }
    if (source.startsWith('<!--', pos)) {
      const end = source.indexOf('-->', pos + 4);
      if (end === -1) fail('comment is not closed with -->');
      if (source.slice(pos + 4, end).includes('--')) fail("'--' is not allowed inside a comment");
      pos = end + 3;
    } else if (source.startsWith('<![CDATA[', pos)) {
      if (stack.length === 0) fail('CDATA outside the root element');
      const end = source.indexOf(']]>', pos);
      if (end === -1) fail('CDATA section is not closed with ]]>');
      stack[stack.length - 1]!.text += source.slice(pos + 9, end);
      pos = end + 3;
    } else if (source.startsWith('<?', pos)) {
      const end = source.indexOf('?>', pos);
      if (end === -1) fail('processing instruction is not closed with ?>');
      const target = /^<\?([^\s?]+)/.exec(source.slice(pos))?.[1] ?? '';
      if (target.toLowerCase() === 'xml' && pos !== (source.charCodeAt(0) === 0xfeff ? 1 : 0)) fail('the XML declaration must come first');
      pos = end + 2;
    } else if (source.startsWith('<!DOCTYPE', pos)) {
      if (root || stack.length > 0) fail('DOCTYPE after the root element');
      const end = source.indexOf('>', pos);
      if (end === -1 || source.slice(pos, end).includes('[')) fail('DOCTYPE with an internal subset is not supported');
      pos = end + 1;
    } else if (source.startsWith('</', pos)) {
      pos += 2;
      const name = readName();
      skipSpace();
      if (source[pos] !== '>') fail(`expected '>' to close </${name}`);
      pos++;
      const open = stack.pop();
      if (!open) fail(`closing tag </${name}> without an opening tag`);
      if (open!.name !== name) fail(`closing tag </${name}> does not match <${open!.name}> opened on line ${open!.line}`);
    } else {
      const tagStart = pos;
      pos++;
      const element: XmlElement = { name: readName(), attributes: {}, children: [], text: '', line: lineAt(tagStart) };
      if (stack.length === 0 && root) fail(`a second root element <${element.name}>; only one is allowed`, tagStart);
      for (;;) {
        const hadSpace = /\s/.test(source[pos] ?? '');
        skipSpace();
        if (pos >= source.length) fail(`tag <${element.name}> is not closed`);
        if (source[pos] === '>' || source.startsWith('/>', pos)) break;
        if (!hadSpace) fail(`expected whitespace before attribute in <${element.name}>`);
        const attr = readName();
        skipSpace();
        if (source[pos] !== '=') fail(`attribute '${attr}' in <${element.name}> has no value`);
        pos++;
        skipSpace();
        const quote = source[pos];
        if (quote !== '"' && quote !== "'") fail(`value of attribute '${attr}' must be quoted`);
        const valueEnd = source.indexOf(quote!, pos + 1);
        if (valueEnd === -1) fail(`value of attribute '${attr}' is not closed`);
        const raw = source.slice(pos + 1, valueEnd);
        if (raw.includes('<')) fail(`'<' is not allowed in the value of attribute '${attr}'`);
        if (Object.hasOwn(element.attributes, attr)) fail(`attribute '${attr}' appears twice in <${element.name}>`);
        element.attributes[attr] = decode(raw, pos + 1);
        pos = valueEnd + 1;
      }
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(element);
      else root = element;
      if (source.startsWith('/>', pos)) {
        pos += 2;
      } else {
        pos++;
        stack.push(element);
      }
    }
  }
  if (stack.length > 0) fail(`element <${stack[stack.length - 1]!.name}> opened on line ${stack[stack.length - 1]!.line} is not closed`);
  if (!root) fail('no root element');
  return root!;
}

function describe(ch: string | undefined): string {
  return ch === undefined ? 'end of input' : `'${ch}'`;
}

/** Direct children named `name`. */
export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}
