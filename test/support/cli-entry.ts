import { join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** src/cli/main.ts compiled by the global setup (test/support/compile-cli.ts). */
    compiledCli: string;
  }
}

const source = join(import.meta.dirname, '../../src/cli/main.ts');

/**
 * The arguments to `node` that start `vespa-bulk` from this checkout: the sources compiled once for the run by the
 * global setup (a start through tsx costs about 0.7 s more), or, where no global setup ran, the sources through
 * tsx as bin/vespa-bulk.js does in a clone.
 */
export function cliArgs(): string[] {
  const compiled = inject('compiledCli') as string | undefined;
  return compiled !== undefined ? [compiled] : ['--import', 'tsx', source];
}
