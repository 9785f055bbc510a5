//! Path checks below every tool, in the WASI filesystem layer:
//!
//! - **Hidden paths.** The operator's Read deny rules (`Read(.env)`, `Read(secrets/**)`) hide
//!   paths from every component, whether it would read, list, stat or grep them. A path is hidden
//!   when it or any ancestor matches, in either spelling: the lexical path (the descriptor's path
//!   joined with the argument) and the physical one (symlinks in the parent resolved, and the final
//!   link too when the operation follows it). A hidden path looks absent (`no-entry`); creating or
//!   changing one is refused (`access`). Directory listings leave hidden entries out.
//! - **Write scope.** A write-class call may create or change only the file its permission
//!   decision allowed (plus the temporary siblings an atomic replace uses, and missing parent
//!   directories); every other mutation is refused (`access`), even inside its read-write preopen.
//!
//! While either applies, arguments holding `..` are refused (the kernel resolves `..` after
//! symlinks, so a lexical check could be walked around; our tools never send `..`), checks fail
//! closed when a path cannot be resolved, and directories cannot be renamed or linked (which would
//! move hidden files out from under their rules). This wraps wasmtime-wasi's `wasi:filesystem`
//! implementation and shadows it in the linker; with neither check every call goes straight
//! through. Descriptor paths are host paths: the sandbox preopens each directory at its host path.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

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

/// Decides whether a host path is hidden from guests.
pub(crate) type HiddenPaths = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// Per-call bookkeeping: the hidden set, the write scope, and the path of every directory
/// descriptor and listing.
#[derive(Default)]
pub(crate) struct PathView {
    hidden: Option<HiddenPaths>,
    write_scope: Option<PathBuf>,
    descriptors: HashMap<u32, PathBuf>,
    listings: HashMap<u32, PathBuf>,
    /// Per-call memos: a walk asks about the same directories thousands of times. The guest
    /// cannot change what they record (it may not rename directories or create links except at
    /// its write target); another process could, which the check-then-open race allows anyway.
    hidden_memo: RefCell<HashMap<PathBuf, bool>>,
    /// Only directories that resolved: one the call creates later must be looked at again.
    canonical_memo: RefCell<HashMap<PathBuf, PathBuf>>,
}

/// Entries a memo holds before it is cleared, bounding a call's host memory.
const MEMO_ENTRIES: usize = 65_536;

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

    /// The lexical path `relative` names under descriptor `rep`: `None` when that descriptor's
    /// path is unknown or `relative` climbs with `..` or is absolute.
    fn child(&self, rep: u32, relative: &str) -> Option<PathBuf> {
        let mut path = self.descriptors.get(&rep)?.clone();
        for part in Path::new(relative).components() {
            match part {
                Component::Normal(name) => path.push(name),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        Some(path)
    }

    /// True when `path`, an ancestor of it, or where it physically leads is hidden, or when that
    /// cannot be told (fail closed). `follow` says whether the operation follows a symlink in the
    /// final component.
    fn is_hidden(&self, path: &Path, follow: bool) -> bool {
        let Some(hidden) = &self.hidden else {
            return false;
        };
        let hidden_here = |path: &Path| {
            hidden(path)
                || path
                    .ancestors()
                    .skip(1)
                    .any(|ancestor| memo(&self.hidden_memo, ancestor, || hidden(ancestor)))
        };
        if hidden_here(path) {
            return true;
        }
        let physical = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => match self.canonical(parent) {
                Some(parent) => parent.join(name),
                None => return true,
            },
            _ => return false,
        };
        if physical != path && hidden_here(&physical) {
            return true;
        }
        if !follow
            || !std::fs::symlink_metadata(&physical).is_ok_and(|meta| meta.file_type().is_symlink())
        {
            return false;
        }
        // A link that cannot be resolved (dangling, a loop) could be created through: refuse.
        std::fs::canonicalize(&physical).map_or(true, |target| hidden_here(&target))
    }

    /// `parent` with every symlink resolved, memoized once it resolves.
    fn canonical(&self, parent: &Path) -> Option<PathBuf> {
        if let Some(real) = self.canonical_memo.borrow().get(parent) {
            return Some(real.clone());
        }
        let real = std::fs::canonicalize(parent).ok()?;
        let mut memo = self.canonical_memo.borrow_mut();
        if memo.len() >= MEMO_ENTRIES {
            memo.clear();
        }
        memo.insert(parent.to_path_buf(), real.clone());
        Some(real)
    }

    /// True when the write scope allows `mutation` of `path`: the target itself, a temporary
    /// sibling an atomic replace uses (`.<name>.warden-*.tmp`), or a missing ancestor directory.
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
            && name.starts_with(&format!(".{stem}.warden-"))
            && name.ends_with(".tmp")
    }

    /// `Ok(())` when a mutation of `relative` under `rep` may go ahead.
    fn check_mutation(&self, rep: u32, relative: &str, mutation: Mutation) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        match self.child(rep, relative) {
            Some(path) if !self.is_hidden(&path, false) && self.may_mutate(&path, mutation) => {
                Ok(())
            }
            _ => Err(ErrorCode::Access.into()),
        }
    }

    /// `Ok(())` unless `relative` under `rep` is a directory: renaming or linking one is refused
    /// while paths are checked, since it would carry files out from under the rules.
    fn refuse_directory(&self, rep: u32, relative: &str) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        match self.child(rep, relative) {
            Some(path) if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) => {
                Ok(())
            }
            _ => Err(ErrorCode::Access.into()),
        }
    }

    /// True when `path` (absolute) is hidden in any spelling.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.is_hidden(path, true)
    }

    /// `Ok(())` when a non-mutating operation may go ahead; `Err` when the path is hidden or
    /// cannot be placed (fail closed).
    fn check(&self, rep: u32, relative: &str, follow: bool, refusal: ErrorCode) -> FsResult<()> {
        if !self.tracking() {
            return Ok(());
        }
        match self.child(rep, relative) {
            Some(path) if !self.is_hidden(&path, follow) => Ok(()),
            _ => Err(refusal.into()),
        }
    }
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
    pub(crate) inner: WasiFilesystemCtxView<'a>,
    pub(crate) view: &'a mut PathView,
}

/// Names [`HidingFs`] for `add_to_linker`.
pub(crate) struct HidingFsData;

impl HasData for HidingFsData {
    type Data<'a> = HidingFs<'a>;
}

fn follows(flags: PathFlags) -> bool {
    flags.contains(PathFlags::SYMLINK_FOLLOW)
}

impl preopens::Host for HidingFs<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        let directories = preopens::Host::get_directories(&mut self.inner)?;
        if self.view.tracking() {
            for (descriptor, name) in &directories {
                self.view
                    .descriptors
                    .insert(descriptor.rep(), PathBuf::from(name));
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
        self.inner.set_size(fd, size)
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> FsResult<()> {
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
                Some(path) => {
                    let path = path.clone();
                    self.view.listings.insert(stream.rep(), path);
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
        self.view.check(
            fd.rep(),
            &old_path,
            follows(old_path_flags),
            ErrorCode::NoEntry,
        )?;
        self.view.refuse_directory(fd.rep(), &old_path)?;
        self.view
            .check_mutation(new_descriptor.rep(), &new_path, Mutation::File)?;
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
        }
        let child = self.view.child(rep, &path);
        let opened = self.inner.open_at(fd, path_flags, path, oflags, flags)?;
        if let Some(child) = child
            && self.view.tracking()
        {
            self.view.descriptors.insert(opened.rep(), child);
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
        self.inner.remove_directory_at(fd, path)
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
        self.inner.rename_at(fd, old_path, new_fd, new_path)
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        self.view
            .check_mutation(fd.rep(), &dest_path, Mutation::File)?;
        self.inner.symlink_at(fd, src_path, dest_path)
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.view
            .check(fd.rep(), &path, false, ErrorCode::NoEntry)?;
        self.view.check_mutation(fd.rep(), &path, Mutation::File)?;
        self.inner.unlink_file_at(fd, path)
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
            if !self.view.is_hidden(&dir.join(&entry.name), false) {
                return Ok(Some(entry.clone()));
            }
        }
    }

    fn drop(&mut self, stream: Resource<DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.view.listings.remove(&stream.rep());
        types::HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}
