//! Every path pattern of a policy's configured rules in one `GlobSet`, so that a decision costs
//! one set search per path spelling instead of one glob per rule: with 1,000 rules the per-rule
//! matchers cost ~0.9 ms per `Read` decision, the set a few microseconds (BENCHMARKS.md).
//!
//! Patterns added after the index was built (session rules, rules checked one at a time) are not
//! in it and are matched directly; [`PathHits::matches`] falls back for them.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};

use super::path_pattern::PathPattern;

/// The compiled set and which pattern each of its globs belongs to.
#[derive(Debug, Clone)]
pub struct PathIndex {
    set: GlobSet,
    /// `owners[i]`: the id of the pattern glob `i` came from.
    owners: Vec<u32>,
    /// The ids indexed, sorted.
    indexed: Vec<u32>,
}

impl PathIndex {
    /// Indexes `patterns`. A set that fails to build (it cannot: each glob compiled alone)
    /// leaves an empty index, and every pattern is matched directly.
    pub fn build<'p>(patterns: impl IntoIterator<Item = &'p PathPattern>) -> Self {
        let mut builder = GlobSetBuilder::new();
        let mut owners = Vec::new();
        let mut indexed = Vec::new();
        for pattern in patterns {
            for glob in pattern.globs() {
                builder.add(glob.clone());
                owners.push(pattern.id());
            }
            indexed.push(pattern.id());
        }
        indexed.sort_unstable();
        indexed.dedup();
        match builder.build() {
            Ok(set) => Self {
                set,
                owners,
                indexed,
            },
            Err(error) => {
                tracing::warn!("path rules are matched one by one: {error}");
                Self {
                    set: GlobSet::empty(),
                    owners: Vec::new(),
                    indexed: Vec::new(),
                }
            }
        }
    }
}

impl PathIndex {
    /// True when any indexed pattern matches `path`.
    pub fn any_match(&self, path: &Path) -> bool {
        self.set.is_match(path)
    }
}

/// One decision's memo of which indexed patterns each path spelling matches. A call has a
/// handful of spellings and each rule asks about each, so the memo is a short list searched by
/// the spelling's address first (the rules ask with the call's own stored paths) and its bytes
/// second: hashing a path for every rule cost more than the set search it saved.
pub struct PathHits<'i> {
    index: &'i PathIndex,
    seen: RefCell<Vec<Seen>>,
}

struct Seen {
    address: usize,
    path: PathBuf,
    hits: Vec<u32>,
}

impl<'i> PathHits<'i> {
    /// An empty memo over `index`.
    pub fn new(index: &'i PathIndex) -> Self {
        Self {
            index,
            seen: RefCell::default(),
        }
    }

    /// True when `pattern` matches `path`: from the set for an indexed pattern (one search per
    /// distinct path, then a lookup), directly otherwise.
    pub fn matches(&self, pattern: &PathPattern, path: &Path) -> bool {
        if self.index.indexed.binary_search(&pattern.id()).is_err() {
            return pattern.matches(path);
        }
        let bytes = path.as_os_str().as_encoded_bytes();
        let address = bytes.as_ptr() as usize;
        let same = |entry: &Seen| entry.path.as_os_str().as_encoded_bytes() == bytes;
        let mut seen = self.seen.borrow_mut();
        let found = seen
            .iter()
            .position(|entry| entry.address == address && same(entry))
            .or_else(|| seen.iter().position(same));
        let entry = match found {
            Some(at) => &seen[at],
            None => {
                let mut hits: Vec<u32> = self
                    .index
                    .set
                    .matches(path)
                    .into_iter()
                    .map(|glob| self.index.owners[glob])
                    .collect();
                hits.sort_unstable();
                hits.dedup();
                seen.push(Seen {
                    address,
                    path: path.to_path_buf(),
                    hits,
                });
                seen.last().expect("just pushed")
            }
        };
        entry.hits.binary_search(&pattern.id()).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path_pattern::Anchors;

    #[test]
    fn the_index_agrees_with_each_pattern_matched_alone() {
        let anchors = Anchors {
            cwd: Path::new("/work"),
            home: Some(Path::new("/home/u")),
            scope_root: Path::new("/work"),
        };
        let specs = [
            ("secrets/**", true),
            ("secrets/**", false),
            (".env", true),
            ("src/*.rs", false),
            ("//etc/passwd", true),
            ("~/notes/", false),
            ("docs/**/*.md", false),
            ("/build", true),
        ];
        let patterns: Vec<PathPattern> = specs
            .iter()
            .map(|(spec, broad)| PathPattern::compile(spec, *broad, &anchors).unwrap())
            .collect();
        let index = PathIndex::build(&patterns[..6]);
        let hits = PathHits::new(&index);
        let paths = [
            "/work/secrets/key",
            "/work/a/secrets/key",
            "/work/.env",
            "/work/deep/.env",
            "/work/src/main.rs",
            "/work/src/sub/main.rs",
            "/etc/passwd",
            "/home/u/notes",
            "/home/u/notes/a.txt",
            "/work/docs/a/b.md",
            "/work/build",
            "/elsewhere",
        ];
        for pattern in &patterns {
            for path in paths {
                assert_eq!(
                    hits.matches(pattern, Path::new(path)),
                    pattern.matches(Path::new(path)),
                    "{pattern:?} on {path}"
                );
            }
        }
    }
}
