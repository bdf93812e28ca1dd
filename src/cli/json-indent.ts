/**
 * Re-indents JSON text as `JSON.stringify(value, null, 2)` would, without parsing it into values: a `long`
 * beyond 2^53 keeps every digit (a parse would round it). Only the white space between tokens changes, so the
 * text must already be valid JSON.
 */
export function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  const newline = (): string => `\n${'  '.repeat(depth)}`;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      let j = i + 1;
      while (j < text.length && isSpace(text[j])) j++;
      if (text[j] === close) {
        out += c + close;
        i = j;
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') {
      out += `,${newline()}`;
    } else if (c === ':') {
      out += ': ';
    } else if (!isSpace(c)) {
      out += c;
    }
  }
  return out;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}
