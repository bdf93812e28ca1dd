import { cloneExact, ExactNumber } from './exact-json.js';
import { badRequest } from './responses.js';

/**
 * Partial updates as the service applies them: `{"<field path>": {"<operation>": <value>}}`. Pure: no I/O.
 *
 * There is no schema in the simulator, so the kind of a field (array, weighted set, map, struct, tensor) is
 * read off its current value: an array is an array, an object keyed by strings is a map or weighted set, an
 * object with `cells` is a tensor.
 */
export type FieldValues = Record<string, unknown>;

type Step = { kind: 'field'; name: string } | { kind: 'key'; key: string } | { kind: 'index'; index: number };

/** Parses `f`, `f{key}`, `f[3]`, `s.sub`, and chains of them. */
export function parseFieldPath(path: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  const readName = (): string => {
    const start = i;
    while (i < path.length && path[i] !== '.' && path[i] !== '{' && path[i] !== '[') i++;
    if (i === start) throw badRequest(`Invalid field path '${path}'`);
    return path.slice(start, i);
  };
  steps.push({ kind: 'field', name: readName() });
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      i++;
      steps.push({ kind: 'field', name: readName() });
    } else if (c === '{') {
      const end = path.indexOf('}', i);
      if (end < 0) throw badRequest(`Invalid field path '${path}': missing '}'`);
      let key = path.slice(i + 1, end);
      if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
      steps.push({ kind: 'key', key });
      i = end + 1;
    } else {
      const end = path.indexOf(']', i);
      const text = end < 0 ? '' : path.slice(i + 1, end);
      if (!/^\d+$/.test(text)) throw badRequest(`Invalid field path '${path}': bad array index`);
      steps.push({ kind: 'index', index: Number(text) });
      i = end + 1;
    }
  }
  return steps;
}

/**
 * Applies the update's `fields` object to a copy of `current` and returns the copy. Throws a 400 HandlerError
 * naming an unsupported operation or a malformed value; `current` is never modified.
 */
export function applyUpdate(current: FieldValues, updates: unknown): FieldValues {
  if (updates === null || typeof updates !== 'object' || Array.isArray(updates))
    throw badRequest("'fields' of an update must be an object of field updates");
  const result: FieldValues = { ...current };
  for (const [path, operations] of Object.entries(updates as Record<string, unknown>)) {
    if (operations === null || typeof operations !== 'object' || Array.isArray(operations))
      throw badRequest(`Update of field '${path}' must be an object like {"assign": <value>}`);
    const steps = parseFieldPath(path);
    const top = (steps[0] as { name: string }).name;
    // Copy-on-write: only the touched field is cloned, so the stored value is never mutated in place.
    if (Object.prototype.hasOwnProperty.call(result, top)) result[top] = cloneJson(result[top]);
    for (const [op, value] of Object.entries(operations as Record<string, unknown>))
      applyOperation(result, steps, path, op, value);
  }
  return result;
}

function applyOperation(root: FieldValues, steps: Step[], path: string, op: string, value: unknown): void {
  const slot = resolve(root, steps, op === 'assign' || op === 'add');
  if (slot === undefined) return; // A missing parent (struct, map entry) leaves nothing to change.
  switch (op) {
    case 'assign':
      if (value === null) slot.remove();
      else slot.set(cloneJson(value));
      return;
    case 'add':
      slot.set(addTo(slot.get(), value, path));
      return;
    case 'remove':
      removeFrom(slot, value, path);
      return;
    case 'increment':
    case 'decrement':
    case 'multiply':
    case 'divide': {
      let current = slot.get();
      if (current === undefined) {
        // The service gives a field without a value its type's default (0 for a number) before applying the
        // operation, so `increment` on a new counter (create=true) yields the increment. Below the top level
        // (map entries, array elements, struct members) there is nothing to change.
        if (steps.length !== 1) return;
        current = 0;
      }
      slot.set(arith(op, current, value, path));
      return;
    }
    case 'match': {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw badRequest(`'match' on field '${path}' needs an object`);
      const { element, ...rest } = value as Record<string, unknown>;
      if (element === undefined) throw badRequest(`'match' on field '${path}' needs 'element'`);
      const container = slot.get();
      // A missing array has no element to match (mapvalueupdate.cpp:71-74 on the empty one the node makes).
      const missing = container === undefined || container === null;
      const step: Step = Array.isArray(container)
        ? { kind: 'index', index: Number(element) }
        : { kind: 'key', key: String(element) }; // eslint-disable-line @typescript-eslint/no-base-to-string -- a map key, a JSON scalar
      for (const [innerOp, innerValue] of Object.entries(rest)) {
        if (innerOp === 'match') throw badRequest(`Nested 'match' on field '${path}' is not supported`);
        if (!missing) applyOperation(root, [...steps, step], path, innerOp, innerValue);
      }
      return;
    }
    case 'modify':
      slot.set(modifyTensor(slot.get(), value, path));
      return;
    default:
      throw badRequest(`Unknown update operation '${op}' on field '${path}'`);
  }
}

interface Slot {
  get(): unknown;
  set(v: unknown): void;
  remove(): void;
}

/**
 * The place a path points at; missing parents are made only when `create` (assign/add on a map key), and
 * attached only once a value is set below them: the content node creates a missing path but keeps it only
 * when the update changed something (structuredfieldvalue.cpp:117-123), so an index past the end of a missing
 * array creates nothing.
 */
function resolve(root: FieldValues, steps: Step[], create: boolean): Slot | undefined {
  let container: unknown = root;
  const made: { parent: unknown; step: Step; value: unknown }[] = [];
  for (let s = 0; s < steps.length - 1; s++) {
    const step = steps[s];
    let next = childOf(container, step);
    if (next === undefined || next === null) {
      if (!create || step.kind === 'index') return undefined;
      next = steps[s + 1].kind === 'index' ? [] : {};
      made.push({ parent: container, step, value: next });
    }
    container = next;
  }
  const last = steps[steps.length - 1];
  const holder = container;
  if (holder === null || typeof holder !== 'object') return undefined;
  return {
    get: () => childOf(holder, last),
    set: (v) => {
      if (setChild(holder, last, v)) for (const m of made) setChild(m.parent, m.step, m.value);
    },
    remove: () => removeChild(holder, last),
  };
}

function childOf(container: unknown, step: Step): unknown {
  if (container === null || typeof container !== 'object') return undefined;
  if (step.kind === 'index') return Array.isArray(container) ? container[step.index] : undefined;
  const key = step.kind === 'field' ? step.name : step.key;
  return Array.isArray(container) ? undefined : (container as Record<string, unknown>)[key];
}

/** Whether the value was set. */
function setChild(container: unknown, step: Step, value: unknown): boolean {
  if (container === null || typeof container !== 'object') return false;
  if (step.kind === 'index') {
    // An index past the end is ignored rather than growing the array (arrayfieldvalue.cpp:162, mapvalueupdate.cpp:71-74).
    if (!Array.isArray(container) || step.index >= container.length) return false;
    container[step.index] = value;
    return true;
  }
  if (Array.isArray(container)) return false;
  (container as Record<string, unknown>)[step.kind === 'field' ? step.name : step.key] = value;
  return true;
}

function removeChild(container: unknown, step: Step): void {
  if (container === null || typeof container !== 'object') return;
  if (step.kind === 'index') {
    if (Array.isArray(container) && step.index < container.length) container.splice(step.index, 1);
    return;
  }
  if (!Array.isArray(container))
    delete (container as Record<string, unknown>)[step.kind === 'field' ? step.name : step.key];
}

function addTo(current: unknown, value: unknown, path: string): unknown {
  if (Array.isArray(value)) {
    if (current === undefined) return cloneJson(value);
    if (Array.isArray(current)) return [...(current as unknown[]), ...(cloneJson(value) as unknown[])];
    throw badRequest(`Cannot 'add' an array to field '${path}', which is not an array`);
  }
  if (value !== null && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.cells) || isTensor(current)) {
      const cells = Array.isArray(v.cells) ? v.cells : [];
      const existing = isTensor(current) ? [...(current as { cells: unknown[] }).cells] : [];
      for (const cell of cells) {
        const address = JSON.stringify((cell as { address?: unknown }).address);
        const at = existing.findIndex((c) => JSON.stringify((c as { address?: unknown }).address) === address);
        if (at >= 0) existing[at] = cell;
        else existing.push(cell);
      }
      return { ...(isTensor(current) ? (current as object) : {}), cells: existing }; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- isTensor is no type guard
    }
    if (current === undefined || (current !== null && typeof current === 'object' && !Array.isArray(current)))
      return { ...((current as object | undefined) ?? {}), ...cloneJson(v) }; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion -- a JSON value spread as an object
  }
  throw badRequest(`Cannot 'add' ${JSON.stringify(value)} to field '${path}'`);
}

function removeFrom(slot: Slot, value: unknown, path: string): void {
  const current = slot.get();
  if (current === undefined) return;
  if (Array.isArray(current)) {
    if (!Array.isArray(value)) {
      // `f[3]: {remove: 0}` style is handled by the path; a bare remove on an array needs the values.
      throw badRequest(`'remove' on array field '${path}' needs an array of values`);
    }
    const unwanted = new Set(value.map((v) => JSON.stringify(v)));
    slot.set(current.filter((v) => !unwanted.has(JSON.stringify(v))));
    return;
  }
  if (current !== null && typeof current === 'object') {
    const obj = current as Record<string, unknown>;
    if (
      isTensor(obj) &&
      value !== null &&
      typeof value === 'object' &&
      Array.isArray((value as { addresses?: unknown }).addresses)
    ) {
      const gone = new Set((value as { addresses: unknown[] }).addresses.map((a) => JSON.stringify(a)));
      slot.set({
        ...obj,
        cells: (obj.cells as unknown[]).filter((c) => !gone.has(JSON.stringify((c as { address?: unknown }).address))),
      });
      return;
    }
    if (Array.isArray(value)) {
      const copy = { ...obj };
      for (const k of value) delete copy[String(k)];
      slot.set(copy);
      return;
    }
    if (value !== null && typeof value === 'object') {
      const copy = { ...obj };
      for (const k of Object.keys(value)) delete copy[k];
      slot.set(copy);
      return;
    }
  }
  // `map{key}: {remove: 0}` and `f[2]: {remove: 0}`: the path names the entry itself.
  slot.remove();
}

function arith(op: string, current: unknown, value: unknown, path: string): number | ExactNumber {
  if (value instanceof ExactNumber) value = Number(value.text);
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) value = Number(value); // The service reads the operand as text.
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw badRequest(`'${op}' on field '${path}' needs a number, got ${JSON.stringify(value)}`);
  if (current instanceof ExactNumber) {
    // An integer beyond 2^53 stays exact when the operand is an integer too.
    if (/^-?\d+$/.test(current.text) && Number.isInteger(value) && op !== 'divide') {
      const a = BigInt(current.text);
      const b = BigInt(value);
      const r = exactArith(op, a, b);
      return Number.isSafeInteger(Number(r)) ? Number(r) : new ExactNumber(String(r));
    }
    current = Number(current.text);
  }
  // A numeric field may hold the text it was given ("2001" is a valid int).
  if (typeof current === 'string' && current.trim() !== '' && Number.isFinite(Number(current)))
    current = Number(current);
  if (typeof current !== 'number') throw badRequest(`'${op}' on field '${path}', which does not hold a number`);
  switch (op) {
    case 'increment':
      return current + value;
    case 'decrement':
      return current - value;
    case 'multiply':
      return current * value;
    default:
      if (value === 0) throw badRequest(`'divide' on field '${path}' by zero`);
      return Number.isInteger(current) && Number.isInteger(value) ? Math.trunc(current / value) : current / value;
  }
}

/** increment, decrement or multiply (the operations that keep integers exact) of two integers. */
function exactArith(op: string, a: bigint, b: bigint): bigint {
  switch (op) {
    case 'increment':
      return a + b;
    case 'decrement':
      return a - b;
    default:
      return a * b;
  }
}

function modifyTensor(current: unknown, value: unknown, path: string): unknown {
  if (value === null || typeof value !== 'object') throw badRequest(`'modify' on field '${path}' needs an object`);
  const v = value as { operation?: unknown; cells?: unknown; addresses?: unknown; blocks?: unknown };
  // The reader's own checks (TensorModifyUpdateReader.java:65-75, 98-117); the schema path (judge.ts) has the rest.
  if (v.operation === undefined) throw badRequest(`Modify update for field '${path}' does not contain an operation`);
  if (v.operation !== 'replace' && v.operation !== 'add' && v.operation !== 'multiply')
    throw badRequest(
      `Unknown operation '${typeof v.operation === 'string' ? v.operation : JSON.stringify(v.operation)}' in modify update for field '${path}'`,
    );
  if (v.cells === undefined && v.addresses === undefined && v.blocks === undefined)
    throw badRequest(`Modify update for field '${path}' does not contain tensor cells`);
  // Cells are matched by address only where the stored tensor and the update both list them; other forms (short
  // cells, blocks) need the field's type to line up, and without it the stored value is kept as it is.
  if (!isTensor(current) || !Array.isArray(v.cells)) return current;
  const cells = [...(current as { cells: Array<{ address?: unknown; value?: unknown }> }).cells];
  for (const cell of v.cells as Array<{ address?: unknown; value?: unknown }>) {
    const address = JSON.stringify(cell.address);
    const at = cells.findIndex((c) => JSON.stringify(c.address) === address);
    if (at < 0) continue;
    const old = Number(cells[at].value);
    const delta = Number(cell.value);
    cells[at] = { ...cells[at], value: modifiedCell(v.operation, old, delta) };
  }
  return { ...(current as object), cells };
}

/** A cell's value after a modify's operation (replace, add or multiply: checked before). */
function modifiedCell(operation: unknown, old: number, delta: number): number {
  if (operation === 'replace') return delta;
  return operation === 'add' ? old + delta : old * delta;
}

function isTensor(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Array.isArray((value as { cells?: unknown }).cells)
  );
}

function cloneJson<T>(value: T): T {
  return cloneExact(value);
}
