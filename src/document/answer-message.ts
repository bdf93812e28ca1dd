/**
 * What an error answer says, in one line for a message: the service's `message`, or, for a page that something in
 * its place wrote (a proxy's or load balancer's HTML), its `<title>` or else its first text, rather than the page's
 * many lines of markup. Other text: its first line. At most `maxChars`; undefined for an empty body. Pure.
 */
export function answerMessage(body: Buffer | string, maxChars = 200): string | undefined {
  const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  if (text === '') return undefined;
  let message: string;
  try {
    const value = JSON.parse(text) as { message?: unknown } | null;
    // The service's own message is kept whole: it is what the reasons file and the user need.
    if (typeof value?.message === 'string') return value.message;
    message = JSON.stringify(value);
  } catch {
    message = /^<|<html[\s>]/i.test(text) ? (textOfHtml(text) ?? 'an HTML page') : text.split(/\r?\n/, 1)[0];
  }
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length <= maxChars ? line : `${line.slice(0, maxChars - 1)}…`;
}

/** `HTTP 502: message`, or `HTTP 502 Bad Gateway` when the message (a page's title) begins with the status itself. */
export function statusMessage(status: number, message: string | undefined): string {
  if (message === undefined) return `HTTP ${status}`;
  return message.startsWith(`${status} `) ? `HTTP ${message}` : `HTTP ${status}: ${message}`;
}

/** The title of an HTML page, else its first text outside the head, scripts and styles; entities of plain text decoded. */
function textOfHtml(html: string): string | undefined {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  if (title !== undefined && decode(title).trim() !== '') return decode(title);
  const body = html.replace(/<(head|script|style)[\s>][\s\S]*?<\/\1>/gi, ' ').replace(/<!--[\s\S]*?-->/g, ' ');
  const first = body
    .split(/<[^>]*>/)
    .map((t) => decode(t).trim())
    .find((t) => t !== '');
  return first;
}

function decode(text: string): string {
  return text.replace(
    /&(lt|gt|quot|#39|apos|nbsp|amp);/g,
    (_, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ', amp: '&' })[e]!,
  );
}
