//! The built-in engine: ripgrep's own crates, printing what `rg` prints (no heading, no colour)
//! for the options the tools use. Files are searched in parallel like rg does, each file's output
//! kept together; the order of files varies as it does with rg.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkFinish,
    SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{DirEntry, WalkBuilder, WalkState};

use super::query::{Mode, Outcome, Query};

/// Runs [`run`] on a blocking thread; dropping the future makes the search stop at its next
/// read or match.
pub(super) async fn run_async(root: PathBuf, query: Query, cap: usize) -> Outcome {
    struct CancelOnDrop(Arc<AtomicBool>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = Arc::clone(&cancel.0);
    tokio::task::spawn_blocking(move || run(&root, &query, cap, &flag))
        .await
        .unwrap_or_else(|e| Outcome::Failed(format!("Error: the search failed: {e}")))
}

/// Runs `query` with `root` (the first root) as rg's working directory would be.
pub(super) fn run(root: &Path, query: &Query, cap: usize, cancel: &AtomicBool) -> Outcome {
    search(root, query, cap, cancel).unwrap_or_else(|e| Outcome::Failed(format!("Error: {e}")))
}

fn search(root: &Path, q: &Query, cap: usize, cancel: &AtomicBool) -> Result<Outcome, String> {
    if q.mode == Mode::TypeList {
        return Ok(Outcome::Output {
            bytes: type_list(),
            cut: false,
        });
    }
    let matcher = match q.mode {
        Mode::Files => None,
        _ => Some(
            RegexMatcherBuilder::new()
                .case_insensitive(q.case_sensitive == Some(false))
                .fixed_strings(q.fixed_strings)
                .word(q.word)
                .line_terminator(Some(b'\n'))
                .build(&q.pattern)
                .map_err(|e| e.to_string())?,
        ),
    };
    let base = root.join(&q.path);
    // Like rg: file names are shown when the one path searched is a directory.
    let with_filename = base.is_dir();
    let mut walk = WalkBuilder::new(&base);
    walk.current_dir(root)
        .hidden(!q.hidden)
        .follow_links(q.follow)
        .add_custom_ignore_filename(".rgignore");
    if let Some(glob) = &q.glob {
        let mut globs = OverrideBuilder::new(root);
        globs.add(glob).map_err(|e| e.to_string())?;
        walk.overrides(globs.build().map_err(|e| e.to_string())?);
    }
    let mut types = TypesBuilder::new();
    types.add_defaults();
    if let Some(name) = &q.file_type {
        types.select(name);
    }
    walk.types(types.build().map_err(|e| e.to_string())?);

    let shared = Mutex::new(Shared::default());
    // rg separates files with `--` when it prints context.
    let separator = q.mode == Mode::Lines && q.context > 0;
    walk.build_parallel().run(|| {
        let mut searcher = searcher_for(q);
        let matcher = matcher.clone();
        let (shared, base) = (&shared, &base);
        let mut buf = Vec::new();
        Box::new(move |entry| {
            if cancel.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    lock(shared).errors.push(e.to_string());
                    return WalkState::Continue;
                }
            };
            if !searchable(&entry) {
                return WalkState::Continue;
            }
            let shown = shown_path(base, &q.path, entry.path());
            let shown = shown.to_string_lossy();
            buf.clear();
            let Some(matcher) = &matcher else {
                buf.extend_from_slice(shown.as_bytes());
                buf.push(b'\n');
                return commit(shared, &buf, false, cap);
            };
            // Like rg: binary files met while walking are skipped at the first NUL; a file
            // named explicitly is searched with NULs read as line ends.
            searcher.set_binary_detection(if entry.depth() == 0 {
                BinaryDetection::convert(0)
            } else {
                BinaryDetection::quit(0)
            });
            let mut printer = Printer {
                mode: q.mode,
                matcher,
                name: with_filename.then_some(shown.as_bytes()),
                path: shown.as_bytes(),
                out: &mut buf,
                max_count: q.max_count,
                matches: 0,
                after_left: 0,
                binary_at: None,
                cap,
                cancel,
            };
            let searched = std::fs::File::open(entry.path()).and_then(|file| {
                let reader = Cancellable {
                    inner: file,
                    cancel,
                };
                searcher.search_reader(matcher, reader, &mut printer)
            });
            if let Err(e) = searched {
                if !cancel.load(Ordering::Relaxed) {
                    lock(shared).errors.push(format!("{shown}: {e}"));
                }
                return WalkState::Continue;
            }
            commit(shared, &buf, separator, cap)
        })
    });
    let shared = shared.into_inner().unwrap_or_else(PoisonError::into_inner);
    // Like rg (exit code 2), any error fails the whole call, unless the output was cut.
    if !shared.errors.is_empty() && !shared.cut {
        return Err(shared.errors.join("\n"));
    }
    Ok(Outcome::Output {
        bytes: shared.out,
        cut: shared.cut,
    })
}

/// `rg --type-list`: every default type, sorted, with its sorted globs.
fn type_list() -> Vec<u8> {
    let mut types = TypesBuilder::new();
    types.add_defaults();
    let mut out = String::new();
    for def in types.definitions() {
        out.push_str(&format!("{}: {}\n", def.name(), def.globs().join(", ")));
    }
    out.into_bytes()
}

fn searcher_for(q: &Query) -> Searcher {
    let lines = q.mode == Mode::Lines;
    let context = if lines { q.context as usize } else { 0 };
    SearcherBuilder::new()
        .invert_match(q.invert)
        .line_number(lines && q.line_numbers)
        .before_context(context)
        .after_context(context)
        .build()
}

/// rg searches a path given explicitly whatever it is (but a directory), and only regular files
/// (symlinks resolved if following) found while walking.
fn searchable(entry: &DirEntry) -> bool {
    let file_type = entry.file_type();
    if entry.depth() == 0 {
        !file_type.is_some_and(|t| t.is_dir())
    } else {
        file_type.is_some_and(|t| t.is_file())
    }
}

/// `path` as rg shows it: the path the client gave, joined with the part below it.
fn shown_path(base: &Path, given: &Path, path: &Path) -> PathBuf {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => given.to_path_buf(),
        Ok(rel) => given.join(rel),
        Err(_) => path.to_path_buf(),
    }
}

#[derive(Default)]
struct Shared {
    out: Vec<u8>,
    cut: bool,
    errors: Vec<String>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Appends one file's output; quits the walk once the cap is passed.
fn commit(shared: &Mutex<Shared>, buf: &[u8], separator: bool, cap: usize) -> WalkState {
    if buf.is_empty() {
        return WalkState::Continue;
    }
    let mut shared = lock(shared);
    if shared.cut {
        return WalkState::Quit;
    }
    if separator && !shared.out.is_empty() {
        shared.out.extend_from_slice(b"--\n");
    }
    shared.out.extend_from_slice(buf);
    if shared.out.len() > cap {
        shared.cut = true;
        return WalkState::Quit;
    }
    WalkState::Continue
}

/// A reader that fails once the search is cancelled.
struct Cancellable<'a, R> {
    inner: R,
    cancel: &'a AtomicBool,
}

impl<R: Read> Read for Cancellable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(io::Error::other("cancelled"));
        }
        self.inner.read(buf)
    }
}

/// A sink printing one file the way rg 13's printers do.
struct Printer<'a> {
    mode: Mode,
    matcher: &'a RegexMatcher,
    /// Shown before each line and count (when searching a directory).
    name: Option<&'a [u8]>,
    /// Shown by `FilesWithMatches`.
    path: &'a [u8],
    out: &'a mut Vec<u8>,
    max_count: Option<u64>,
    /// Matching lines, or matches for `CountMatches`.
    matches: u64,
    after_left: u64,
    binary_at: Option<u64>,
    cap: usize,
    cancel: &'a AtomicBool,
}

impl Printer<'_> {
    fn write_line(&mut self, separator: u8, line_number: Option<u64>, line: &[u8]) {
        if let Some(name) = self.name {
            self.out.extend_from_slice(name);
            self.out.push(separator);
        }
        if let Some(n) = line_number {
            self.out.extend_from_slice(n.to_string().as_bytes());
            self.out.push(separator);
        }
        self.out.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            self.out.push(b'\n');
        }
    }

    fn go_on(&self) -> bool {
        let done = self
            .max_count
            .is_some_and(|max| self.matches >= max && self.after_left == 0);
        !done && self.out.len() <= self.cap && !self.cancel.load(Ordering::Relaxed)
    }

    /// After a NUL in a file named explicitly, rg prints a note instead of more lines.
    fn stopped_by_binary(&self, searcher: &Searcher) -> bool {
        searcher.binary_detection().convert_byte().is_some() && self.binary_at.is_some()
    }
}

impl Sink for Printer<'_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> io::Result<bool> {
        match self.mode {
            Mode::FilesWithMatches => {
                self.matches += 1;
                return Ok(false);
            }
            Mode::CountMatches => {
                let mut found = 0;
                self.matcher
                    .find_iter(mat.bytes(), |_| {
                        found += 1;
                        true
                    })
                    .map_err(io::Error::other)?;
                self.matches += found;
                return Ok(self.go_on());
            }
            Mode::Count => {
                self.matches += 1;
                return Ok(self.go_on());
            }
            Mode::Lines | Mode::Files | Mode::TypeList => {}
        }
        self.matches += 1;
        // Past the limit, a match inside the trailing context counts as context (rg 13).
        if self.max_count.is_some_and(|max| self.matches > max) {
            self.after_left = self.after_left.saturating_sub(1);
        } else {
            self.after_left = searcher.after_context() as u64;
        }
        if self.stopped_by_binary(searcher) {
            return Ok(false);
        }
        self.write_line(b':', mat.line_number(), mat.bytes());
        Ok(self.go_on())
    }

    fn context(&mut self, searcher: &Searcher, ctx: &SinkContext<'_>) -> io::Result<bool> {
        if *ctx.kind() == SinkContextKind::After {
            self.after_left = self.after_left.saturating_sub(1);
        }
        if self.stopped_by_binary(searcher) {
            return Ok(false);
        }
        self.write_line(b'-', ctx.line_number(), ctx.bytes());
        Ok(self.go_on())
    }

    fn context_break(&mut self, _: &Searcher) -> io::Result<bool> {
        self.out.extend_from_slice(b"--\n");
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, offset: u64) -> io::Result<bool> {
        self.binary_at = Some(offset);
        Ok(true)
    }

    fn finish(&mut self, searcher: &Searcher, _: &SinkFinish) -> io::Result<()> {
        // A file left at its first NUL counts for nothing in summaries, as in rg: a partial
        // count would mislead.
        let quit_on_binary = searcher.binary_detection().quit_byte().is_some();
        if self.matches == 0
            || (self.mode != Mode::Lines && quit_on_binary && self.binary_at.is_some())
        {
            return Ok(());
        }
        match self.mode {
            Mode::FilesWithMatches => {
                self.out.extend_from_slice(self.path);
                self.out.push(b'\n');
            }
            Mode::Count | Mode::CountMatches => {
                if let Some(name) = self.name {
                    self.out.extend_from_slice(name);
                    self.out.push(b':');
                }
                self.out
                    .extend_from_slice(format!("{}\n", self.matches).as_bytes());
            }
            Mode::Lines => {
                let Some(offset) = self.binary_at else {
                    return Ok(());
                };
                if let Some(name) = self.name {
                    self.out.extend_from_slice(name);
                    self.out.extend_from_slice(b": ");
                }
                let what = if quit_on_binary {
                    "WARNING: stopped searching binary file after match"
                } else {
                    "binary file matches"
                };
                self.out.extend_from_slice(
                    format!("{what} (found \"\\0\" byte around offset {offset})\n").as_bytes(),
                );
            }
            Mode::Files | Mode::TypeList => {}
        }
        Ok(())
    }
}
