import { afterAll, describe, expect, it } from 'vitest';
import { SpillWriter, partitionOf, readPartition } from '../../src/compare/spill.js';
import { tempDir } from '../support/temp-dir.js';

describe('spill files', () => {
  const tmp = tempDir('vb-spill-');
  afterAll(() => tmp.cleanup());

  it("give back each id's last put by partition, removes taking ids out, records larger than the buffer whole", async () => {
    const w = new SpillWriter(tmp.dir, 'a', 3);
    const big = Buffer.from(`{"text":"${'x'.repeat(200_000)}"}`);
    const ids = Array.from({ length: 50 }, (_, i) => `id:ns:t::${i}é`);
    for (const id of ids) await w.add(id, Buffer.from(`{"v":"${id}"}`));
    await w.add(ids[1], null);
    await w.add(ids[2], null);
    await w.add(ids[2], Buffer.from('{"again":true}'));
    await w.add(ids[3], big);
    await w.close();
    const all = new Map<string, string>();
    for (let p = 0; p < 3; p++) {
      for (const [id, fields] of await readPartition(tmp.dir, 'a', p)) {
        expect(partitionOf(id, 3)).toBe(p);
        all.set(id, fields.toString());
      }
    }
    expect(all.size).toBe(49);
    expect(all.has(ids[1])).toBe(false);
    expect(all.get(ids[2])).toBe('{"again":true}');
    expect(all.get(ids[3])).toBe(big.toString());
    expect(all.get(ids[49])).toBe(`{"v":"${ids[49]}"}`);
  });
});
