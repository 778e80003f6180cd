// Search quality over the default catalog: realistic agent queries (plain words, other word
// forms, typos, names) must put the expected tool in the top 3. The table is printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { DEFAULT_CATALOG_DIR } from './helpers.js';

/** [query, expected 'category.tool'] */
export const QUALITY_QUERIES: readonly (readonly [string, string])[] = [
  ['read a file', 'filesystem.read_text_file'],
  ['read the first lines of a log file', 'filesystem.read_text_file'],
  ['write text to a file on disk', 'filesystem.write_file'],
  ['replace text inside a file', 'filesystem.edit_file'],
  ['list files in a directory', 'filesystem.list_directory'],
  ['find files matching *.ts', 'filesystem.search_files'],
  ['rename a file', 'filesystem.move_file'],
  ['file size and modification time', 'filesystem.get_file_info'],
  ['create github issue', 'github.create_issue'],
  ['open a pull request', 'github.create_pull_request'],
  ['merge pr', 'github.merge_pull_request'],
  ['approve a pull request review', 'github.create_pull_request_review'],
  ['list open issues in a repo', 'github.list_issues'],
  ['comment on an issue', 'github.add_issue_comment'],
  ['serch repositorys', 'github.search_repositories'],
  ['search code across repositories', 'github.search_code'],
  ['get file contents from github', 'github.get_file_contents'],
  ['is CI passing on my PR', 'github.get_pull_request_status'],
  ['knowledge graph entity', 'memory.create_entities'],
  // create_entities, as test/fixtures/real-catalog/queries.json labels 'remember that Alice works at Acme':
  // a fact about someone the graph may not hold yet (add_observations needs the entity; it ranks 4th).
  ['remember a fact about a person', 'memory.create_entities'],
  ['search memory graph', 'memory.search_nodes'],
  ['send slack message', 'slack.slack_post_message'],
  ['reply to a slack thread', 'slack.slack_reply_to_thread'],
  ['react with an emoji', 'slack.slack_add_reaction'],
  ['run a SQL query against the database', 'postgres.query'],
  ['search the web for news', 'brave-search.brave_web_search'],
  ['restaurants near me', 'brave-search.brave_local_search'],
  ['download a web page as markdown', 'fetch.fetch'],
  ['git commit staged changes', 'git.git_commit'],
  ['show commit history', 'git.git_log'],
  ['diff unstaged changes', 'git.git_diff_unstaged'],
  ['switch git branch', 'git.git_checkout'],
  ['read a google spreadsheet', 'google-drive.gsheets_read'],
  ['find a document in google drive', 'google-drive.gdrive_search'],
  ['salesforce opportunities SOQL query', 'salesforce.salesforce_query_records'],
  ['sum amounts grouped by stage', 'salesforce.salesforce_aggregate_query'],
  ['time in Tokyo', 'time.get_current_time'],
  ['convert 9:00 New York to London time', 'time.convert_time'],
  ['mask emails and phone numbers', 'sandbox.tokenize_pii'],
  ['filter records where status is open', 'sandbox.filter_by_field'],
  ['average and max of a numeric column', 'sandbox.aggregate_stats'],
  ['save code as a reusable skill', 'sandbox.save_skill'],
  ['save results to the workspace', 'sandbox.write_file'],
  ['wait a second between calls', 'sandbox.sleep'],
  ['tokenise pii', 'sandbox.tokenize_pii'],
  ['creat issu', 'github.create_issue'],
];

let catalog: Catalog;
beforeAll(async () => {
  catalog = new Catalog({ dir: DEFAULT_CATALOG_DIR, logger: silentLogger(), watch: false });
  await catalog.start();
});
afterAll(() => catalog.close());

describe('search quality', () => {
  it(`puts the expected tool in the top 3 for all ${QUALITY_QUERIES.length} queries`, () => {
    const rows = QUALITY_QUERIES.map(([query, expected]) => {
      const top = catalog.search({ query, detail_level: 'name', limit: 3 }).tools.map((t) => `${t.category}.${t.name}`);
      const rank = top.indexOf(expected) + 1;
      return { query, expected, rank: rank || '-', top: top.join(', ') };
    });
    const width = Math.max(...rows.map((r) => r.query.length));
    const table = rows.map((r) => `${r.rank === 1 ? ' ' : r.rank === '-' ? '✗' : ' '} ${String(r.rank).padStart(1)}  ${r.query.padEnd(width)}  ${r.top}`);
    const hits = rows.filter((r) => r.rank !== '-').length;
    const first = rows.filter((r) => r.rank === 1).length;
    process.stdout.write(`\nsearch quality: ${hits}/${rows.length} in top 3, ${first}/${rows.length} first\nrank  ${'query'.padEnd(width)}  top 3\n${table.join('\n')}\n\n`);
    expect(rows.filter((r) => r.rank === '-')).toEqual([]);
  });
});
