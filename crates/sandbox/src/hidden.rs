//! Path checks below every tool, in the WASI filesystem layer:
//!
//! - **Hidden paths.** The operator's Read deny rules (`Read(.env)`, `Read(secrets/**)`) hide
//!   paths from every component, whether it would read, list, stat or grep them. A path is hidden
//!   when it or any ancestor matches, in either spelling: the lexical path (the descriptor's path
//!   joined with the argument) and the physical one (symlinks in the parent resolved, and the final
//!   link too when the operation follows it). A hidden path looks absent (`no-entry`); creating or
//!   changing one is refused (`access`). Directory listings leave hidden entries out. A regular
//!   file with more than one link is hidden when any of its names under the preopened
//!   directories is (found by device and inode): a hard link is the same file.
//! - **Write scope.** A write-class call may create or change only the file its permission
//!   decision allowed (plus the temporary siblings an atomic replace uses, and missing parent
//!   directories); every other mutation is refused (`access`), even inside its read-write preopen.
//!
//! - **Only files that cannot block.** Every open (checks or not) is refused (`unsupported`) for
//!   anything but a regular file, a directory or a link: a FIFO, socket or device could hold the
//!   guest inside `open` or a read until another process acts, and guests run their file calls on
//!   the calling thread (see `call.rs`).
//!
//! While either of the first two applies:
//! - arguments holding `..` or longer than [`MAX_PATH_BYTES`] are refused (the kernel resolves
//!   `..` after symlinks, so a lexical check could be walked around; our tools never send `..`);
//! - checks fail closed when a path cannot be resolved, except that a path whose parent does not
//!   exist is answered `no-entry`, as the kernel would (so `create_dir_all` can recurse);
//! - guests cannot create symlinks or hard links, and cannot open an existing symlink (or, under a
//!   write scope, a file with other hard links) for writing: a link would let a checked spelling
//!   name an unchecked file, or a write at the target land somewhere else;
//! - directories cannot be renamed (which would move hidden files out from under their rules);
//! - each directory descriptor remembers the physical path it was opened at, so re-pointing a
//!   link after opening cannot change what a check sees.
//!
//! This wraps wasmtime-wasi's `wasi:filesystem` implementation and shadows it in the linker; with
//! neither check every call goes straight through. Descriptor paths are host paths: the sandbox
//! preopens each directory at its host path.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    self, DescriptorStat, DirectoryEntry, DirectoryEntryStream, Filesize, MetadataHashValue,
    NewTimestamp, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::bindings::sync::io::streams;
use wasmtime_wasi::p2::{FsError, FsResult};

pub use janua_types::HiddenPaths;

/// Per-call bookkeeping: the hidden set, the write scope, and the paths of every descriptor and
/// listing.
#[derive(Default)]
pub(crate) struct PathView {
    hidden: Option<HiddenPaths>,
    write_scope: Option<PathBuf>,
    descriptors: HashMap<u32, Spelling>,
    listings: HashMap<u32, Spelling>,
    /// Per-call memos: a walk asks about the same directories thousands of times.
    /// `hidden_memo` holds a pure function of the path. `canonical_memo` holds only directories
    /// that resolved and is cleared after every removal or rename the call makes (a guest cannot
    /// create links); another process could still change the tree, which the check-then-open
    /// race allows anyway.
    hidden_memo: RefCell<HashMap<PathBuf, bool>>,
    canonical_memo: RefCell<HashMap<PathBuf, PathBuf>>,
    /// The preopened directories: where other names of a multiply linked file are looked for.
    roots: Vec<PathBuf>,
    /// The (device, inode) of every multiply linked file under the roots that has a hidden
    /// name, found by one walk the first time the call meets such a file.
    hidden_links: std::cell::OnceCell<std::collections::HashSet<(u64, u64)>>,
}

/// Both spellings of a checked path: the lexical one (descriptor path joined with the argument)
/// and the physical one (from the physical path the descriptor was opened at, not yet resolved
/// below it).
#[derive(Clone, Debug)]
struct Spelling {
    lexical: PathBuf,
    physical: PathBuf,
}

impl Spelling {
    fn same(path: &Path) -> Self {
        Self {
            lexical: path.to_path_buf(),
            physical: path.to_path_buf(),
        }
    }

    fn join(&self, name: impl AsRef<Path>) -> Self {
        Self {
            lexical: self.lexical.join(name.as_ref()),
            physical: self.physical.join(name.as_ref()),
        }
    }
}

/// What a check finds about a path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Visibility {
    /// Neither spelling is hidden.
    Visible,
    /// A spelling is hidden, or cannot be resolved (fail closed).
    Hidden,
    /// Its parent does not exist: the kernel would answer `no-entry` too.
    Missing,
}

/// Entries a memo holds before it is cleared, bounding a call's host memory (paths are at most
/// [`MAX_PATH_BYTES`] long).
const MEMO_ENTRIES: usize = 16_384;

/// Longest path a check looks at, in bytes (Linux's `PATH_MAX`): longer ones are refused before
/// any work, so a guest cannot make the host walk or memoize millions of ancestors.
pub(crate) const MAX_PATH_BYTES: usize = 4096;

/// What a mutating operation does to its path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mutation {
    /// Creates a directory (allowed for the write target's missing ancestors).
    CreateDirectory,
    /// Creates, changes, replaces or removes a file.
    File,
}

impl PathView {
    /// A view hiding what `hidden` matches and allowing mutations only of `write_scope`; with
    /// neither it tracks nothing.
    pub(crate) fn new(hidden: Option<HiddenPaths>, write_scope: Option<PathBuf>) -> Self {
        Self {
            hidden,
            write_scope,
            ..Self::default()
        }
    }

    fn tracking(&self) -> bool {
        self.hidden.is_some() || self.write_scope.is_some()
    }

    /// Both spellings of what `relative` names under descriptor `rep`: `None` when that
    /// descriptor's path is unknown or `relative` is too long, climbs with `..` or is absolute.
    fn child(&self, rep: u32, relative: &str) -> Option<Spelling> {
        if relative.len() > MAX_PATH_BYTES {
            return None;
        }
        let mut spelling = self.descriptors.get(&rep)?.clone();
        for part in Path::new(relative).components() {
            match part {
                Component::Normal(name) => {
                    spelling.lexical.push(name);
                    spelling.physical.push(name);
                }
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(spelling)
    }

    /// Whether `spelling`, an ancestor of it, or where it physically leads is hidden, or the file
    /// is a hidden file under another name. `follow` says whether the operation follows a
    /// symlink in the final component.
    fn visibility(&self, spelling: &Spelling, follow: bool) -> Visibility {
        let by_name = self.visibility_by_name(spelling, follow);
        if by_name == Visibility::Visible && self.hidden_by_another_name(&spelling.physical) {
            return Visibility::Hidden;
        }
        by_name
    }

    /// A hard link is the same file under another name (issue 31, point 3): a regular file with
    /// more than one link is hidden when any of its names under the preopened directories is.
    /// Only a call that meets a multiply linked file pays for it: one bounded walk of the roots,
    /// then a set lookup per file (a tree of hard links, as pnpm makes, costs one walk, not one
    /// per file).
    fn hidden_by_another_name(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        let Some(hidden) = &self.hidden else {
            return false;
        };
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        if !meta.is_file() || meta.nlink() < 2 {
            return false;
        }
        let hidden_links = self.hidden_links.get_or_init(|| {
            let mut found = std::collections::HashSet::new();
            for root in &self.roots {
                janua_types::walk(root, |name, entry| {
                    if entry.file_type().is_ok_and(|kind| kind.is_file())
                        && name.ancestors().any(|path| hidden(path))
                        && let Ok(meta) = entry.metadata()
                        && meta.nlink() > 1
                    {
                        found.insert((meta.dev(), meta.ino()));
                    }
                    false
                });
            }
            found
        });
        hidden_links.contains(&(meta.dev(), meta.ino()))
    }

    /// [`PathView::visibility`] by the names alone.
    fn visibility_by_name(&self, spelling: &Spelling, follow: bool) -> Visibility {
        let Some(hidden) = &self.hidden else {
            return Visibility::Visible;
        };
        if spelling.lexical.as_os_str().len() > MAX_PATH_BYTES
            || spelling.physical.as_os_str().len() > MAX_PATH_BYTES
        {
            return Visibility::Hidden;
        }
        let hidden_here = |path: &Path| {
            hidden(path)
                || path
                    .ancestors()
                    .skip(1)
                    .any(|ancestor| memo(&self.hidden_memo, ancestor, || hidden(ancestor)))
        };
        if hidden_here(&spelling.lexical) {
            return Visibility::Hidden;
        }
        let unresolved = &spelling.physical;
        let physical = match (unresolved.parent(), unresolved.file_name()) {
            (Some(parent), Some(name)) => match self.canonical(parent) {
                Ok(parent) => parent.join(name),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    return Visibility::Missing;
                }
                Err(_) => return Visibility::Hidden,
            },
            _ => return Visibility::Visible,
        };
        if physical != spelling.lexical && hidden_here(&physical) {
            return Visibility::Hidden;
        }
        if !follow || !is_symlink(&physical) {
            return Visibility::Visible;
        }
        // A link that cannot be resolved (dangling, a loop) could be created through: refuse.
        match std::fs::canonicalize(&physical) {
            Ok(target) if !hidden_here(&target) => Visibility::Visible,
            _ => Visibility::Hidden,
        }
    }

    /// `parent` with every symlink resolved, memoized once it resolves.
    fn canonical(&self, parent: &Path) -> std::io::Result<PathBuf> {
        if let Some(real) = self.canonical_memo.borrow().get(parent) {
            return Ok(real.clone());
        }
        let real = std::fs::canonicalize(parent)?;
        let mut memo = self.canonical_memo.borrow_mut();
        if memo.len() >= MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(parent.to_path_buf(), real.clone());
        Ok(real)
    }

    /// The physical path of what `spelling` names, its parent's links resolved; `None` when the
    /// parent does not resolve.
    fn resolved(&self, spelling: &Spelling) -> Option<PathBuf> {
        let physical = &spelling.physical;
        Some(
            self.canonical(physical.parent()?)
                .ok()?
                .join(physical.file_name()?),
        )
    }

    /// Forgets resolved directories after the call removed or renamed something.
    fn tree_changed(&self) {
        self.canonical_memo.borrow_mut().clear();
    }

    /// True when the write scope allows `mutation` of `path`: the target itself, a temporary
    /// sibling an atomic replace uses (`.<name>.janua-*.tmp`), or a missing ancestor directory.
    fn may_mutate(&self, path: &Path, mutation: Mutation) -> bool {
        let Some(target) = &self.write_scope else {
            return true;
        };
        if path == target {
            return mutation == Mutation::File;
        }
        if mutation == Mutation::CreateDirectory {
            return target.starts_with(path);
        }
        let (Some(name), Some(target_name)) = (path.file_name(), target.file_name()) else {
            return false;
        };
        let stem: String = target_name.to_string_lossy().chars().take(64).collect();
        let name = name.to_string_lossy();
        path.parent() == target.parent()
            && name.starts_with(&format!(".{stem}.janua-"))
            && name.ends_with(".tmp")
    }

    /// `Ok(())` when a mutation of `relative` under `rep` may go ahead.
    fn check_mutation(&self, rep: u32, relative: &str, mutation: Mutation) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        let Some(spelling) = self.child(rep, relative) else {
            return Err(ErrorCode::Access.into());
        };
        match self.visibility(&spelling, false) {
            Visibility::Visible if self.may_mutate(&spelling.lexical, mutation) => Ok(()),
            Visibility::Missing => Err(ErrorCode::NoEntry.into()),
            _ => Err(ErrorCode::Access.into()),
        }
    }

    /// `Ok(())` unless `relative` under `rep` is an existing symlink, or (under a write scope) a
    /// file with other hard links: opening either for writing would change a file the checks
    /// never saw.
    fn check_writable_file(&self, rep: u32, relative: &str) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        let Some(path) = self
            .child(rep, relative)
            .and_then(|spelling| self.resolved(&spelling))
        else {
            return Err(ErrorCode::Access.into());
        };
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => Err(ErrorCode::Access.into()),
            Ok(meta)
                if self.write_scope.is_some()
                    && meta.is_file()
                    && std::os::unix::fs::MetadataExt::nlink(&meta) > 1 =>
            {
                Err(ErrorCode::Access.into())
            }
            _ => Ok(()),
        }
    }

    /// `Ok(())` when the write scope allows changing the file behind descriptor `rep` itself
    /// (its times or size).
    fn check_descriptor_mutation(&self, rep: u32) -> FsResult<()> {
        if self.write_scope.is_none() {
            return Ok(());
        }
        match self.descriptors.get(&rep) {
            Some(spelling) if self.may_mutate(&spelling.lexical, Mutation::File) => Ok(()),
            _ => Err(ErrorCode::Access.into()),
        }
    }

    /// `Err` while paths are checked: a new symlink or hard link would let a checked spelling name
    /// an unchecked file (and our tools never make one).
    fn refuse_links(&self) -> FsResult<()> {
        if self.tracking() {
            return Err(ErrorCode::Access.into());
        }
        Ok(())
    }

    /// `Ok(())` unless `relative` under `rep` is a directory: renaming one is refused while paths
    /// are checked, since it would carry files out from under the rules.
    fn refuse_directory(&self, rep: u32, relative: &str) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        match self
            .child(rep, relative)
            .and_then(|spelling| self.resolved(&spelling))
        {
            Some(path) if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) => {
                Ok(())
            }
            _ => Err(ErrorCode::Access.into()),
        }
    }

    /// True when `path` (absolute) is hidden in any spelling, too long, or cannot be placed.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        path.as_os_str().len() > MAX_PATH_BYTES
            || self.visibility(&Spelling::same(path), true) != Visibility::Visible
    }

    /// `Ok(())` when a non-mutating operation may go ahead; `Err` when the path is hidden or
    /// cannot be placed (fail closed).
    fn check(&self, rep: u32, relative: &str, follow: bool, refusal: ErrorCode) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        let Some(spelling) = self.child(rep, relative) else {
            return Err(refusal.into());
        };
        match self.visibility(&spelling, follow) {
            Visibility::Visible => Ok(()),
            Visibility::Missing => Err(ErrorCode::NoEntry.into()),
            Visibility::Hidden => Err(refusal.into()),
        }
    }

    /// Starts tracking a descriptor the guest opened at `spelling`: a directory's physical path is
    /// resolved now, while it is the one the kernel holds.
    fn track(&mut self, rep: u32, mut spelling: Spelling, directory: bool) {
        if directory {
            match std::fs::canonicalize(&spelling.physical) {
                Ok(real) => spelling.physical = real,
                // Cannot be placed: leave it untracked, so everything under it is refused.
                Err(_) => return,
            }
        }
        self.descriptors.insert(rep, spelling);
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// `memo[key]`, computed by `compute` the first time.
fn memo<T: Clone>(
    memo: &RefCell<HashMap<PathBuf, T>>,
    key: &Path,
    compute: impl FnOnce() -> T,
) -> T {
    if let Some(value) = memo.borrow().get(key) {
        return value.clone();
    }
    let value = compute();
    let mut memo = memo.borrow_mut();
    if memo.len() >= MEMO_ENTRIES {
        memo.clear();
    }
    memo.insert(key.to_path_buf(), value.clone());
    value
}

/// The filesystem host the linker sees: wasmtime-wasi's, behind the path checks.
pub(crate) struct HidingFs<'a> {
    pub inner: WasiFilesystemCtxView<'a>,
    pub view: &'a mut PathView,
}

/// Names [`HidingFs`] for `add_to_linker`.
pub(crate) struct HidingFsData;

impl HasData for HidingFsData {
    type Data<'a> = HidingFs<'a>;
}

/// True for every file type but regular files, directories and links (which the open either
/// follows to a checked target or refuses): FIFOs, sockets and devices can make `open` or a read
/// wait on another process indefinitely. (wasmtime-wasi reports FIFOs and sockets as `unknown`.)
fn may_block_on_open(kind: types::DescriptorType) -> bool {
    !matches!(
        kind,
        types::DescriptorType::RegularFile
            | types::DescriptorType::Directory
            | types::DescriptorType::SymbolicLink
    )
}

fn follows(flags: PathFlags) -> bool {
    flags.contains(PathFlags::SYMLINK_FOLLOW)
}

impl preopens::Host for HidingFs<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let directories = preopens::Host::get_directories(&mut self.inner)?;
        if self.view.tracking() {
            for (descriptor, name) in &directories {
                let path = PathBuf::from(name);
                let spelling = Spelling {
                    physical: std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()),
                    lexical: path,
                };
                if !self.view.roots.contains(&spelling.physical) {
                    self.view.roots.push(spelling.physical.clone());
                }
                self.view.descriptors.insert(descriptor.rep(), spelling);
            }
        }
        Ok(directories)
    }
}

impl types::Host for HidingFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<types::ErrorCode> {
        self.inner.convert_error_code(err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<streams::Error>,
    ) -> wasmtime::Result<Option<types::ErrorCode>> {
        self.inner.filesystem_error_code(err)
    }
}

impl types::HostDescriptor for HidingFs<'_> {
    fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
        len: Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice)
    }

    fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync_data(fd)
    }

    fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        self.inner.get_flags(fd)
    }

    fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        self.inner.get_type(fd)
    }

    fn set_size(&mut self, fd: Resource<Descriptor>, size: Filesize) -> FsResult<()> {
        self.view.check_descriptor_mutation(fd.rep())?;
        self.inner.set_size(fd, size)
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> FsResult<()> {
        self.view.check_descriptor_mutation(fd.rep())?;
        self.inner.set_times(fd, atim, mtim)
    }

    fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: Filesize,
        offset: Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset)
    }

    fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: Filesize,
    ) -> FsResult<Filesize> {
        self.inner.write(fd, buf, offset)
    }

    fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DirectoryEntryStream>> {
        let rep = fd.rep();
        let stream = self.inner.read_directory(fd)?;
        if self.view.tracking() {
            match self.view.descriptors.get(&rep) {
                Some(spelling) => {
                    let spelling = spelling.clone();
                    self.view.listings.insert(stream.rep(), spelling);
                }
                // A listing of a directory whose path is unknown cannot be filtered: refuse it.
                None => {
                    self.inner.table.delete(stream)?;
                    return Err(ErrorCode::Access.into());
                }
            }
        }
        Ok(stream)
    }

    fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync(fd)
    }

    fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.view
            .check_mutation(fd.rep(), &path, Mutation::CreateDirectory)?;
        self.inner.create_directory_at(fd, path)
    }

    fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorStat> {
        self.inner.stat(fd)
    }

    fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> FsResult<DescriptorStat> {
        self.view
            .check(fd.rep(), &path, follows(path_flags), ErrorCode::NoEntry)?;
        self.inner.stat_at(fd, path_flags, path)
    }

    fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> FsResult<()> {
        self.view
            .check(fd.rep(), &path, follows(path_flags), ErrorCode::NoEntry)?;
        self.view.check_mutation(fd.rep(), &path, Mutation::File)?;
        self.inner.set_times_at(fd, path_flags, path, atim, mtim)
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.view.refuse_links()?;
        self.inner
            .link_at(fd, old_path_flags, old_path, new_descriptor, new_path)
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        oflags: OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let rep = fd.rep();
        self.view
            .check(rep, &path, follows(path_flags), ErrorCode::NoEntry)?;
        let mutates = oflags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE)
            || flags.contains(types::DescriptorFlags::WRITE);
        if mutates {
            self.view.check_mutation(rep, &path, Mutation::File)?;
            self.view.check_writable_file(rep, &path)?;
        }
        // Opening a FIFO (or a device) can block until another process acts, and a guest runs
        // its file calls on the calling thread: only regular files and directories are opened.
        if let Ok(stat) = self
            .inner
            .stat_at(Resource::new_borrow(rep), path_flags, path.clone())
            && may_block_on_open(stat.type_)
        {
            return Err(ErrorCode::Unsupported.into());
        }
        let child = self.view.child(rep, &path);
        let opened = self.inner.open_at(fd, path_flags, path, oflags, flags)?;
        if let Some(child) = child
            && self.view.tracking()
        {
            let directory = matches!(
                self.inner.get_type(Resource::new_borrow(opened.rep())),
                Ok(types::DescriptorType::Directory)
            );
            self.view.track(opened.rep(), child, directory);
        }
        Ok(opened)
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.view.descriptors.remove(&fd.rep());
        types::HostDescriptor::drop(&mut self.inner, fd)
    }

    fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        self.view
            .check(fd.rep(), &path, false, ErrorCode::NoEntry)?;
        self.inner.readlink_at(fd, path)
    }

    fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.view
            .check(fd.rep(), &path, false, ErrorCode::NoEntry)?;
        self.view.check_mutation(fd.rep(), &path, Mutation::File)?;
        self.inner.remove_directory_at(fd, path)?;
        self.view.tree_changed();
        Ok(())
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        self.view
            .check(fd.rep(), &old_path, false, ErrorCode::NoEntry)?;
        self.view.refuse_directory(fd.rep(), &old_path)?;
        self.view
            .check_mutation(fd.rep(), &old_path, Mutation::File)?;
        self.view
            .check_mutation(new_fd.rep(), &new_path, Mutation::File)?;
        self.inner.rename_at(fd, old_path, new_fd, new_path)?;
        self.view.tree_changed();
        Ok(())
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        self.view.refuse_links()?;
        self.inner.symlink_at(fd, src_path, dest_path)
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.view
            .check(fd.rep(), &path, false, ErrorCode::NoEntry)?;
        self.view.check_mutation(fd.rep(), &path, Mutation::File)?;
        self.inner.unlink_file_at(fd, path)?;
        self.view.tree_changed();
        Ok(())
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<streams::InputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> FsResult<Resource<streams::OutputStream>> {
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<streams::OutputStream>> {
        self.inner.append_via_stream(fd)
    }

    fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b)
    }

    fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> FsResult<MetadataHashValue> {
        self.inner.metadata_hash(fd)
    }

    fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> FsResult<MetadataHashValue> {
        self.view
            .check(fd.rep(), &path, follows(path_flags), ErrorCode::NoEntry)?;
        self.inner.metadata_hash_at(fd, path_flags, path)
    }
}

impl types::HostDirectoryEntryStream for HidingFs<'_> {
    fn read_directory_entry(
        &mut self,
        stream: Resource<DirectoryEntryStream>,
    ) -> FsResult<Option<DirectoryEntry>> {
        let rep = stream.rep();
        loop {
            let entry = self.inner.read_directory_entry(Resource::new_borrow(rep))?;
            let (Some(entry), Some(dir)) = (&entry, self.view.listings.get(&rep)) else {
                return Ok(entry);
            };
            if self.view.visibility(&dir.join(&entry.name), false) == Visibility::Visible {
                return Ok(Some(entry.clone()));
            }
        }
    }

    fn drop(&mut self, stream: Resource<DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.view.listings.remove(&stream.rep());
        types::HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view_hiding_env(root: &Path) -> PathView {
        let hidden_file = root.join(".env");
        let hidden: HiddenPaths = std::sync::Arc::new(move |path: &Path| path == hidden_file);
        let mut view = PathView::new(Some(hidden), None);
        view.descriptors.insert(0, Spelling::same(root));
        view
    }

    #[test]
    fn overlong_paths_are_refused_before_any_walk() {
        let root = tempfile::tempdir().unwrap();
        let view = view_hiding_env(root.path());
        let deep = "a/".repeat(MAX_PATH_BYTES);
        assert!(view.child(0, &deep).is_none());
        assert!(view.hides(&root.path().join(&deep)));
        assert!(view.hidden_memo.borrow().is_empty(), "nothing was memoized");
        assert!(!view.hides(&root.path().join("visible.txt")));
        assert!(view.hides(&root.path().join(".env")));
    }

    #[test]
    fn a_missing_parent_reads_as_no_entry_not_as_hidden() {
        let root = tempfile::tempdir().unwrap();
        let view = view_hiding_env(root.path());
        let missing = view.child(0, "new/sub").unwrap();
        assert_eq!(view.visibility(&missing, false), Visibility::Missing);
        let refusal = view.check_mutation(0, "new/sub", Mutation::CreateDirectory);
        assert!(matches!(
            refusal.map_err(|error| error.downcast()),
            Err(Ok(ErrorCode::NoEntry))
        ));
        assert!(
            view.check_mutation(0, "new", Mutation::CreateDirectory)
                .is_ok()
        );
    }
}
