//! Hides paths from a guest's filesystem view: the operator's Read deny rules (`Read(.env)`,
//! `Read(secrets/**)`) apply at the WASI layer, below every tool, so no component can disclose a
//! denied file, whether it would read it, list it, stat it or grep it.
//!
//! This wraps wasmtime-wasi's `wasi:filesystem/types` implementation and shadows it in the linker.
//! Every path operation is checked against the hidden set in two spellings: the lexical path (the
//! descriptor's path joined with the argument) and the physical one (symlinks in the parent
//! resolved, and the final link too when the operation follows it), so a symlink cannot lead to a
//! hidden file. A hidden path looks absent (`no-entry`); creating or changing one is refused
//! (`access`). Directory listings leave hidden entries out.
//!
//! It does not widen anything: with no hidden paths every call goes straight to wasmtime-wasi.
//! Descriptor paths are host paths, because the sandbox preopens each directory at its host path.

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

/// Per-call bookkeeping: the hidden set and the path of every directory descriptor and listing.
#[derive(Default)]
pub(crate) struct PathView {
    hidden: Option<HiddenPaths>,
    descriptors: HashMap<u32, PathBuf>,
    listings: HashMap<u32, PathBuf>,
}

impl PathView {
    /// A view hiding what `hidden` matches; `None` hides nothing and tracks nothing.
    pub(crate) fn new(hidden: Option<HiddenPaths>) -> Self {
        Self {
            hidden,
            ..Self::default()
        }
    }

    /// The lexical path `relative` names under descriptor `rep`, if that descriptor's path is known.
    fn child(&self, rep: u32, relative: &str) -> Option<PathBuf> {
        let base = self.descriptors.get(&rep)?;
        let mut path = base.clone();
        for part in Path::new(relative).components() {
            match part {
                Component::Normal(name) => path.push(name),
                Component::ParentDir => {
                    path.pop();
                }
                // An absolute argument is refused by wasmtime-wasi; resolve it as the kernel would.
                Component::RootDir => path = PathBuf::from("/"),
                Component::CurDir | Component::Prefix(_) => {}
            }
        }
        Some(path)
    }

    /// True when `path` or where it physically leads is hidden. `follow` says whether the
    /// operation follows a symlink in the final component.
    fn is_hidden(&self, path: &Path, follow: bool) -> bool {
        let Some(hidden) = &self.hidden else {
            return false;
        };
        if hidden(path) {
            return true;
        }
        let physical = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => match std::fs::canonicalize(parent) {
                Ok(parent) => parent.join(name),
                Err(_) => return false,
            },
            _ => return false,
        };
        if physical != path && hidden(&physical) {
            return true;
        }
        follow
            && std::fs::symlink_metadata(&physical).is_ok_and(|meta| meta.file_type().is_symlink())
            && std::fs::canonicalize(&physical).is_ok_and(|target| hidden(&target))
    }

    /// True when `path` (absolute) is hidden in any spelling.
    pub(crate) fn hides(&self, path: &Path) -> bool {
        self.is_hidden(path, true)
    }

    /// `Ok(())` when the operation may go ahead, recording nothing; `Err` when the path is hidden
    /// or cannot be placed (fail closed).
    fn check(&self, rep: u32, relative: &str, follow: bool, refusal: ErrorCode) -> FsResult<()> {
        if self.hidden.is_none() {
            return Ok(());
        }
        match self.child(rep, relative) {
            Some(path) if !self.is_hidden(&path, follow) => Ok(()),
            _ => Err(refusal.into()),
        }
    }
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
        if self.view.hidden.is_some() {
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
        if self.view.hidden.is_some() {
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
        self.view.check(fd.rep(), &path, false, ErrorCode::Access)?;
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
        self.view
            .check(new_descriptor.rep(), &new_path, false, ErrorCode::Access)?;
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
        let child = self.view.child(rep, &path);
        let opened = self.inner.open_at(fd, path_flags, path, oflags, flags)?;
        if let Some(child) = child
            && self.view.hidden.is_some()
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
        self.view
            .check(new_fd.rep(), &new_path, false, ErrorCode::Access)?;
        self.inner.rename_at(fd, old_path, new_fd, new_path)
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        self.view
            .check(fd.rep(), &dest_path, false, ErrorCode::Access)?;
        self.inner.symlink_at(fd, src_path, dest_path)
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        self.view
            .check(fd.rep(), &path, false, ErrorCode::NoEntry)?;
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
