import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import type { FieldDifference } from './values.js';

/**
 * The diff file: one JSON object a line. `{"id":…,"side":"a"}` for a document only side `a` holds (`"b"`: only
 * `b`), `{"id":…,"field":…,"a":…,"b":…}` for a field whose values differ, each value as that side wrote it and
 * `null` where the side has none. Lines are built from the values' own text, so a long beyond 2^53 is not rounded.
 */
export class DiffWriter {
  private readonly stream: WriteStream;
  private failure: Error | undefined;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path);
    this.stream.on('error', (err) => (this.failure ??= err));
  }

  async only(id: string, side: 'a' | 'b'): Promise<void> {
    await this.write(`{"id":${JSON.stringify(id)},"side":"${side}"}\n`);
  }

  async fields(id: string, differences: readonly FieldDifference[]): Promise<void> {
    const idJson = JSON.stringify(id);
    await this.write(
      differences
        .map((d) => `{"id":${idJson},"field":${JSON.stringify(d.field)},"a":${oneLine(d.a)},"b":${oneLine(d.b)}}\n`)
        .join(''),
    );
  }

  private async write(text: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.stream.end(resolve));
    if (this.failure !== undefined) throw this.failure;
  }

  destroy(): void {
    this.stream.destroy();
  }
}

/**
 * A value's JSON text on one line, `null` when absent. A pretty-printed export has newlines between tokens; JSON
 * strings cannot hold a raw one, so every newline is whitespace and becomes a space.
 */
function oneLine(text: string | undefined): string {
  if (text === undefined) return 'null';
  return text.replace(/[\r\n]+/g, ' ');
}
