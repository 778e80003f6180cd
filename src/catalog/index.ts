// The catalog subsystem's public API: the Catalog class, its contract types, and the pure
// helpers (signatures, file-tree rendering) the sandbox and MCP front build on.
export { Catalog, DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS } from './catalog.js';
export { MINIMAL_LIMIT, profileSearchDefaults } from './search-options.js';
export type { CatalogOptions } from './catalog.js';
export { CatalogError, DETAIL_LEVELS } from './catalog-types.js';
export type {
  CacheStats,
  Callability,
  CatalogChange,
  CatalogChangeListener,
  CatalogChangeReason,
  CatalogErrorCode,
  CatalogStats,
  CatalogViewer,
  CategoriesResult,
  CategoryInfo,
  DetailLevel,
  DynamicToolEntry,
  InvalidFile,
  JsonSchema,
  SearchOptions,
  SearchResult,
  ToolDefinition,
  ToolEntry,
  ToolNameView,
  ToolSource,
  ToolSummaryView,
  ToolView,
} from './catalog-types.js';
export { ENTRY_FILE_SCHEMA, MAX_ENTRY_FILE_BYTES } from './entry-validation.js';
export { COMPACT_STYLE, FULL_STYLE, jsonSchemaToType, memberAccess, schemaToTypeScript, SHORTENED_NOTE, toIdentifier } from './schema-to-typescript.js';
export type { SignatureStyle } from './schema-to-typescript.js';
export { renderServerIndex, renderToolFile, safeFileName, serverIndexPath, SERVERS_ROOT, toolFilePath } from './tool-files.js';
