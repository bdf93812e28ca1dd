import { tokenName, type JsonNode } from './json-tree.js';

/**
 * One entry of a map given in its array form, `[{"key": k, "value": v}, ...]`, checked as the document parser's
 * MapReader.fillMapFromArray reads it (document/src/main/java/com/yahoo/document/json/readers/MapReader.java:43-69).
 * Pure: no I/O.
 *
 * The parser looks at exactly two token positions of the entry, reading a value where the position's name is
 * `key` or `value`, then demands both and then the entry's end. So the first two members must be `key` and
 * `value` (either order), a third member is refused, and the order of the failures is the reader's: a bad
 * key or value first (what the callbacks throw), then a missing one (500: Guava's checkState, an
 * IllegalStateException), then the end. Returns the refusal, or undefined for a good entry; the caller throws it
 * as its own error type (value-reader.ts).
 */
export function mapArrayEntryFault(
  entry: JsonNode,
  readKey: (node: JsonNode) => void,
  readValue: (node: JsonNode) => void,
): MapEntryFault | undefined {
  // JsonParserHelpers.expectObjectStart (JsonParserHelpers.java:30-37).
  if (entry.kind !== 'object')
    return { status: 400, message: `Expected start of JSON object, got ${tokenName(entry)}` };
  let key = false;
  let value = false;
  const read = (name: string | undefined, node: JsonNode): void => {
    if (name === 'key') {
      readKey(node);
      key = true;
    } else if (name === 'value') {
      readValue(node);
      value = true;
    }
  };
  const members = entry.entries;
  if (members.length > 0) {
    const [firstName, firstNode] = members[0];
    read(firstName, firstNode);
    if (firstName === 'key' || firstName === 'value') {
      // A value read is consumed whole, so the next position is the second member.
      if (members.length > 1) read(members[1][0], members[1][1]);
    } else if (firstNode.kind === 'object') {
      // A skipped member is not consumed: the next position is inside it (its first member, or its end).
      if (firstNode.entries.length > 0) read(firstNode.entries[0][0], firstNode.entries[0][1]);
    } else if (firstNode.kind !== 'array' && members.length > 1) {
      read(members[1][0], members[1][1]);
    }
  }
  // MapReader.java:63.
  if (!key || !value) return { status: 500, message: 'Missing key or value for map entry.' };
  // JsonParserHelpers.expectObjectEnd (JsonParserHelpers.java:39-46), on the token after the two positions.
  if (members.length > 2)
    return { status: 400, message: `Expected end of JSON object, got ${tokenName(members[2][1])}` };
  return undefined;
}

/** Why an entry is refused: 400 for the parser's IllegalArgumentException, 500 for its IllegalStateException. */
export interface MapEntryFault {
  status: 400 | 500;
  message: string;
}
