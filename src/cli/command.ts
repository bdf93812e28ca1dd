import type { CommandModule } from 'yargs';

/**
 * Any command of the CLI. yargs types a command by its own and its parents' arguments, so a list of commands
 * with different arguments has no common type narrower than this one.
 */
export type AnyCommand = CommandModule<any, any>;
