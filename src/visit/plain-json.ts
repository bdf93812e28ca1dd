import { Readable, pipeline } from 'node:stream';
import streamJson from 'stream-json';
import AssemblerModule from 'stream-json/Assembler.js';

/**
 * The plain JSON visit response (`{"pathId","documents":[...],"documentCount","continuation"}`), read
 * incrementally with stream-json: documents are handed on in small groups as they arrive, so a long
 * streamed response from a server without JSONL is never held whole.
 *
 * stream-json turns numbers into JavaScript numbers: integers beyond 2^53 in fields lose precision on this
 * path (the JSONL path passes bytes through untouched).
 */
export interface PlainJsonTail {
  continuation?: string;
  message?: string;
  documentCount?: number;
}

interface Token {
  name: string;
  value?: unknown;
}

const { parser } = streamJson as unknown as { parser: (options?: Record<string, unknown>) => NodeJS.ReadWriteStream };
const Assembler = AssemblerModule as unknown as new () => { consume(token: Token): void; done: boolean; current: unknown; depth: number };

const groupSize = 256;

export async function readPlainJson(body: AsyncIterable<Buffer>, onDocuments: (items: unknown[]) => void | Promise<void>): Promise<PlainJsonTail> {
  const jsonParser = parser({ streamValues: false });
  // pipeline, not pipe: a body that fails (a cut connection) must fail the token stream too.
  pipeline(Readable.from(body), jsonParser, () => {});
  const tokens = jsonParser as unknown as AsyncIterable<Token>;
  let complete = false;
  const tail: PlainJsonTail = {};
  let depth = 0;
  let key: string | undefined;
  let inDocuments = false;
  let assembler: InstanceType<typeof Assembler> | undefined;
  let group: unknown[] = [];
  for await (const token of tokens) {
    if (assembler !== undefined) {
      assembler.consume(token);
      if (assembler.done) {
        group.push(assembler.current);
        assembler = undefined;
        if (group.length >= groupSize) {
          const g = group;
          group = [];
          await onDocuments(g);
        }
      }
      continue;
    }
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        if (inDocuments && depth === 2) {
          assembler = new Assembler();
          assembler.consume(token);
          continue;
        }
        if (depth === 1 && key === 'documents' && token.name === 'startArray') inDocuments = true;
        depth++;
        break;
      case 'endObject':
      case 'endArray':
        depth--;
        if (depth === 0) complete = true;
        if (inDocuments && depth === 1) {
          inDocuments = false;
          if (group.length > 0) {
            const g = group;
            group = [];
            await onDocuments(g);
          }
        }
        break;
      case 'keyValue':
        if (depth === 1) key = token.value as string;
        break;
      case 'stringValue':
        if (depth === 1 && key === 'continuation') tail.continuation = token.value as string;
        else if (depth === 1 && key === 'message') tail.message = token.value as string;
        break;
      case 'numberValue':
        if (depth === 1 && key === 'documentCount') tail.documentCount = Number(token.value);
        break;
      default:
        break;
    }
  }
  if (group.length > 0) await onDocuments(group);
  if (!complete) throw new Error('the JSON response ended before its end');
  return tail;
}
