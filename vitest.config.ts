import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions depend on how fast the machine is at a moment: rates measured over 100 ms windows (the
 * adaptive visit's search), and a signal that must come before a short visit ends. With other files beside them on
 * a 2-core machine they can measure the neighbour's load instead. They run after the rest, alone.
 */
const alone = ['test/visit/adaptive.test.ts', 'test/faults/signals.test.ts'];

export default defineConfig({
  test: {
    // Tests start real servers on loopback; a generous per-test bound keeps a hung socket from stalling CI.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Compiles the CLI once for the tests that start it as a child process (test/support/cli-entry.ts).
    globalSetup: ['./test/support/compile-cli.ts'],
    reporters: ['default', './test/support/count-reporter.ts'],
    projects: [
      // Two files at a time: most of a file's time is waiting on loopback sockets and child processes.
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts'],
          exclude: alone,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
