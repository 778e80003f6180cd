// The global names the sandbox API defines, shared with the coordinator (context_vars may not
// shadow them). Plain data only: the coordinator imports this file.

/** Names the sandbox API defines; context_vars may not shadow them. */
export const SANDBOX_API_NAMES = [
  'console', 'print', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'sleep',
  'Date', 'Math', 'URL', 'URLSearchParams', 'atob', 'btoa', 'structuredClone', 'crypto',
  'read_file', 'write_file', 'list_files', 'delete_file', 'workspace',
  'save_skill', 'load_skill', 'list_skills', 'import_skill',
  'tokenize_pii', 'detokenize_pii',
  'filter_by_field', 'summarize_list', 'aggregate_stats', 'format_output', 'search_tools',
  'tools', 'fetch', 'result',
] as const;
