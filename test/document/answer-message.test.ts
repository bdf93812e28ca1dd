import { describe, expect, it } from 'vitest';
import { answerMessage, statusMessage } from '../../src/document/answer-message.js';

/** An error answer in one line: the service's message whole, a proxy's HTML page by its title, not its markup. */
describe('answerMessage', () => {
  it("the service's JSON message whole; other JSON compact", () => {
    const long = 'x'.repeat(500);
    expect(answerMessage(Buffer.from(JSON.stringify({ message: long })))).toBe(long);
    expect(answerMessage('{"code": 5,\n "error": "no"}')).toBe('{"code":5,"error":"no"}');
  });

  it('an HTML page: its title, else its first text; entities decoded', () => {
    const page =
      '<html>\n<head><title>502 Bad Gateway</title><style>p{}</style></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n';
    expect(answerMessage(page)).toBe('502 Bad Gateway');
    expect(
      answerMessage(
        '<!DOCTYPE html><html><head><script>x()</script></head><body><h1>Fish &amp; chips</h1><p>more</p></body></html>',
      ),
    ).toBe('Fish & chips');
  });

  it('plain text: its first line, cut at maxChars; empty: undefined', () => {
    expect(answerMessage('upstream timed out\nat line 2')).toBe('upstream timed out');
    expect(answerMessage('y'.repeat(300), 20)).toBe(`${'y'.repeat(19)}…`);
    expect(answerMessage('  \n')).toBeUndefined();
  });

  it('statusMessage: a title that begins with the status says it once', () => {
    expect(statusMessage(502, '502 Bad Gateway')).toBe('HTTP 502 Bad Gateway');
    expect(statusMessage(400, 'bad selection')).toBe('HTTP 400: bad selection');
    expect(statusMessage(503, undefined)).toBe('HTTP 503');
  });
});
