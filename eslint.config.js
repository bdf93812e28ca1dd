// typescript-eslint with type information: slower than a syntax-only linter (about 15 s on this tree against
// Biome's 0.5 s), but it catches what the type-checker lets through and matters here: promises not awaited
// or awaited when they are not promises, non-Error throws, methods passed unbound. See ARCHITECTURE.md.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'docs/', 'node_modules/', 'benchmarks/out/', '**/*.js', '**/*.mjs', 'samples/'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Rethrowing or passing on what a catch received (typed unknown) is right; throwing a literal is not.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true, allowRethrowing: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // A variable that closures read before its one assignment must stay a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // The byte scanners name byte codes with const enums and compare them with buffer bytes, by design.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // Control characters are what some patterns exist to find (the JSON and schema scanners).
      'no-control-regex': 'off',
    },
  },
  {
    // A choice of three or more is read as code that names it (if/else, a switch, a table, a helper), not as ?: in ?:.
    files: ['src/**/*.ts'],
    rules: { 'no-nested-ternary': 'error' },
  },
  {
    // yargs infers each option's type through overloads; an assertion the rule calls unnecessary there narrows
    // the builder's result, and removing it breaks the command's typing.
    // The same overloads make the parsed arguments `any`-typed in places: the no-unsafe family would flag the
    // thin shell everywhere it hands flags on. The library under it is held to them.
    files: ['src/cli/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON answers and poke at internals: the no-unsafe family would be noise there.
    files: ['test/**/*.ts', 'benchmarks/**/*.ts', 'vitest.config.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/require-await': 'off',
      // Tests save methods (process.stdout.write) to restore them, and pass on what child processes reject with.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    // A test says what it found through its assertions and their messages; a child script it spawns may print
    // (it is a string there, not code this rule sees).
    files: ['test/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
