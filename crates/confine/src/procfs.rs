//! A confined child's `/proc` (issue 31, points 2 and 5): its own PID namespace's, mounted with
//! `hidepid=ptraceable`, so it lists only the processes the child may trace. The namespace's init shares
//! the host's memory and lies outside the child's Landlock domain, so it is hidden: the kernel
//! would otherwise serve its `cmdline` and `status` (the host's) without a ptrace check.
//!
//! Every child's Landlock rules refuse opening `/proc` at all; the browser alone reads its own
//! (Chromium reads `/proc/self`), by a rule added in the child once that `/proc` is mounted (its
//! inode does not exist before), and only after checking that it is its own and that the init is
//! hidden. Everything here runs in the child between `clone` and `exec`: system calls only.

use std::ffi::CStr;
use std::os::fd::{AsRawFd as _, OwnedFd};

use super::confine::check;

/// `landlock_add_rule`'s rule type for a directory and what lies beneath it (uapi
/// `LANDLOCK_RULE_PATH_BENEATH`; the `landlock` crate allocates, so it cannot be called in the
/// child, and `libc` does not define it).
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// uapi `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: libc::c_int,
}

/// Mounts a `proc` of the caller's PID namespace on `target`, hiding the processes the reader
/// may not trace (`hidepid=ptraceable`, Linux 5.8; not `hidepid=2`, which shows every process to
/// a member of its `gid`, root's group by default); a kernel without it gets a plain `proc` (the
/// browser then refuses to start, [`check_init_hidden`]). False when the kernel refuses a `proc`
/// (a container masking parts of the host's).
pub(super) fn mount(target: &CStr) -> bool {
    let with = |options: Option<&CStr>| {
        // SAFETY: a system call on NUL-terminated strings.
        unsafe {
            libc::mount(
                c"proc".as_ptr(),
                target.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                options.map_or(std::ptr::null(), |options| options.as_ptr().cast()),
            ) == 0
        }
    };
    with(Some(c"hidepid=ptraceable")) || with(None)
}

/// Adds the child's `/proc` to `ruleset` with `access` when it is the child's own (its `self`
/// names the child as its PID namespace numbers it); true when added. A `/proc` that is the
/// host's (bound where the kernel refused a fresh one) gets no rule: the child then reads no
/// `/proc`, never the host's.
pub(super) fn allow_own(ruleset: &OwnedFd, access: u64) -> std::io::Result<bool> {
    // SAFETY: system calls on a descriptor opened here and stack values.
    unsafe {
        let proc = libc::open(
            c"/proc".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        check(proc)?;
        let mut link = [0u8; 16];
        let length = libc::readlinkat(proc, c"self".as_ptr(), link.as_mut_ptr().cast(), link.len());
        let mut digits = [0u8; 16];
        let own = usize::try_from(length)
            .ok()
            .is_some_and(|length| link.get(..length) == Some(decimal(libc::getpid(), &mut digits)));
        if !own {
            libc::close(proc);
            return Ok(false);
        }
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: proc,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            LANDLOCK_RULE_PATH_BENEATH,
            std::ptr::from_ref(&rule),
            0u32,
        );
        let error = std::io::Error::last_os_error();
        libc::close(proc);
        if added == -1 {
            return Err(error);
        }
    }
    Ok(true)
}

/// Fails unless the namespace's init is hidden from the child, now that it is in its Landlock
/// domain (a `/proc` mounted without `hidepid` would show it): never a `/proc` that shows the
/// host's command line.
pub(super) fn check_init_hidden() -> std::io::Result<()> {
    // SAFETY: a system call on a static string.
    let visible = unsafe { libc::faccessat(libc::AT_FDCWD, c"/proc/1".as_ptr(), libc::F_OK, 0) };
    if visible == 0 {
        return Err(std::io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(())
}

/// `number` in decimal, in `buffer`. No allocation.
fn decimal(number: libc::pid_t, buffer: &mut [u8; 16]) -> &[u8] {
    let mut rest = number.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    &buffer[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_writes_process_ids() {
        let mut buffer = [0u8; 16];
        assert_eq!(decimal(0, &mut buffer), b"0");
        assert_eq!(decimal(2, &mut buffer), b"2");
        assert_eq!(decimal(4_194_304, &mut buffer), b"4194304");
        assert_eq!(decimal(libc::pid_t::MAX, &mut buffer), b"2147483647");
    }
}
