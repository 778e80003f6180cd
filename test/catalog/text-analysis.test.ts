// The pieces under search: word splitting of identifiers, the light stemmer that makes word
// forms meet, and the edit distance behind "did you mean".
import { describe, expect, it } from 'vitest';
import { processTerm, splitWords, stem, tokenizeName } from '../../src/catalog/text-analysis.js';
import { closestNames } from '../../src/catalog/suggestions.js';
import { editDistance } from '../../src/util/edit-distance.js';

describe('text analysis', () => {
  it('splits identifiers on _ - . and camelCase', () => {
    expect(splitWords('read_text_file getFileInfo HTTPServer brave-search v2.api')).toEqual(['read', 'text', 'file', 'get', 'File', 'Info', 'HTTP', 'Server', 'brave', 'search', 'v2', 'api']);
    expect(tokenizeName('tools.github.create_issue({ owner })')).toEqual(['tools', 'github', 'create', 'issue', 'owner', 'tools.github.create_issue']);
  });

  it.each([
    ['files', 'file'], ['searching', 'search'], ['searches', 'search'], ['issues', 'issue'], ['repositories', 'repository'],
    ['repositorys', 'repository'], ['created', 'create'], ['creating', 'create'], ['running', 'run'], ['directories', 'directory'],
    ['messages', 'message'], ['statuses', 'status'], ['copied', 'copy'],
  ])('stems %s like %s', (a, b) => {
    expect(stem(a)).toBe(stem(b));
  });

  it('leaves words that only look inflected alone', () => {
    expect(stem('string')).toBe('string');
    expect(stem('status')).toBe('status');
    expect(stem('process')).toBe('process');
    expect(stem('analysis')).toBe('analysis');
    expect(stem('tree')).toBe('tree');
  });

  it('drops stop words and keeps identifiers whole', () => {
    expect(['The', 'to', 'Reading', 'read_file', 'x'.repeat(41)].map(processTerm)).toEqual([null, null, 'read', 'read_file', null]);
  });
});

describe('suggestions', () => {
  it('measures edit distance with transpositions and an early stop', () => {
    expect(editDistance('serch', 'search')).toBe(1);
    expect(editDistance('isuse', 'issue')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3);
  });

  it('ranks clear typos, then related names, then near names, stably', () => {
    const candidates = ['github.get_issue', 'github.create_issue', 'github.list_issues', 'slack.slack_post_message'].map((label) => ({ label, keys: [label.split('.')[1] as string, label] }));
    expect(closestNames('create_isue', candidates)).toEqual(['github.create_issue']);
    // Names containing the input are near misses, the shorter (closer) first.
    expect(closestNames('issue', candidates)).toEqual(['github.get_issue', 'github.create_issue', 'github.list_issues']);
    expect(closestNames('post message', candidates, ['slack.slack_post_message'], 1)).toEqual(['slack.slack_post_message']);
    expect(closestNames('zzzz', candidates)).toEqual([]);
  });
});
