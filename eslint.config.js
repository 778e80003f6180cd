// Lint: typescript-eslint's recommended rules, plus the project's habits (no console in src/).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'workspace/**', 'skills/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  { files: ['src/**', 'workers/**'], rules: { 'no-console': 'error' } },
  { files: ['bin/**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
