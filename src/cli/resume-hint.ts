/**
 * The command a stopped feed prints to continue it. Run as printed, from the same directory, it feeds the rest to
 * the target the feed began on and as it began, since the checkpoint records both (docs/guarantees.md). What a
 * checkpoint does not keep is named after the command: credentials and headers given as flags, and inputs it
 * cannot read again by itself (standard input, a URL whose query it masked).
 */
export function resumeHint(
  checkpointFile: string,
  given: { flags: readonly string[]; inputs: readonly string[] },
): string {
  const command = `vespa-bulk feed --resume ${shellWord(checkpointFile)}`;
  const again: string[] = [];
  if (given.flags.length > 0)
    again.push(`${given.flags.join(', ')} again (a checkpoint keeps no credentials or headers)`);
  if (given.inputs.includes('-')) again.push('the same standard input');
  if (given.inputs.some((i) => /^https?:\/\/[^?]*\?/i.test(i)))
    again.push('the input URLs again (a checkpoint keeps no query)');
  return again.length === 0 ? command : `${command}, with ${again.join('; ')}`;
}

/** `word` as a shell reads it back: as it is when it has nothing the shell would change, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What a stopped export (`visit` to a file or stdout) says of how to go on. With a checkpoint the same command
 * continues it (visit has no --resume: the command names its outputs, which the checkpoint does not own); to
 * standard output the rest follows what this run wrote only if the user appends it. Without one nothing was
 * saved, and a rerun starts over.
 */
export function visitResumeHint(checkpoint: string | undefined, toStdout: boolean): string {
  if (checkpoint === undefined)
    return `nothing was saved to resume from (no --checkpoint): running it again starts from the beginning${toStdout ? '' : ' and writes the output anew'}; give --checkpoint FILE to be able to continue a stopped export`;
  const rest = toStdout ? ', appending its standard output to what this run wrote (>>)' : '';
  return `continue with: the same command, which goes on from the checkpoint ${shellWord(checkpoint)}${rest}; nothing is written twice`;
}

/** What a stopped migration (`visit --to-endpoint`) says of how to go on: it keeps no checkpoint. */
export function migrationResumeHint(): string {
  return 'nothing was saved to resume from (a migration keeps no checkpoint): running it again visits and feeds every document from the beginning (those already copied are put again)';
}
