import type { CommandModule } from 'yargs';

// Placeholder until this command's module is written.
export const commands: CommandModule<any, any>[] = [];
