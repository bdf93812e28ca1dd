import { afterAll, beforeAll } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js';
import { tempDir, type TempDir } from './temp-dir.js';

/** What `simulatorForFile` gives a test file: read in its tests, after its `beforeAll` has run. */
export interface SimulatorForFile {
  readonly sim: Simulator;
  readonly tmp: TempDir;
}

/**
 * A simulator's document interface (no config server) with `faults`, and a temporary folder, for a whole test
 * file: started in its `beforeAll`, closed and removed in its `afterAll`. Call it at the file's top level.
 */
export function simulatorForFile(faults: SimulatorOptions['faults'], prefix: string): SimulatorForFile {
  const fixture = {} as { sim: Simulator; tmp: TempDir };
  beforeAll(async () => {
    fixture.sim = await startSimulator({ port: 0, configPort: false, faults });
    fixture.tmp = tempDir(prefix);
  });
  afterAll(async () => {
    await fixture.sim?.close();
    fixture.tmp?.cleanup();
  });
  return fixture;
}
