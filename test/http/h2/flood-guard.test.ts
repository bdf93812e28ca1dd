import { describe, expect, it } from 'vitest';
import { AckBacklog } from '../../../src/http/h2/flood-guard.js';

describe('AckBacklog: the acknowledgements owed and not taken', () => {
  it('says no at the first past the bound while nothing is handed over', () => {
    const b = new AckBacklog(3);
    expect([b.add(), b.add(), b.add(), b.add()]).toEqual([true, true, true, false]);
  });

  it('forgets what a socket took within its high-water mark', () => {
    const b = new AckBacklog(3);
    b.add();
    b.add();
    b.handed(true);
    expect(b.outstanding).toBe(0);
    expect([b.add(), b.add(), b.add()]).toEqual([true, true, true]);
  });

  it('keeps counting what a full socket holds until it drains', () => {
    const b = new AckBacklog(3);
    b.add();
    b.add();
    b.handed(false);
    expect(b.outstanding).toBe(2);
    b.add();
    expect(b.add()).toBe(false);
  });

  it('is no flood when every write fills the socket but each drains: a server that pings with every answer and reads', () => {
    const b = new AckBacklog(10);
    for (let turn = 0; turn < 1000; turn++) {
      expect(b.add()).toBe(true);
      expect(b.add()).toBe(true);
      b.handed(false);
      b.drained();
    }
    expect(b.outstanding).toBe(0);
  });

  it('is a flood when the socket never drains, whatever turns the PINGs arrive in', () => {
    const b = new AckBacklog(10);
    let ok = true;
    for (let turn = 0; turn < 20 && ok; turn++) {
      ok = b.add();
      b.handed(false);
    }
    expect(ok).toBe(false);
  });
});
