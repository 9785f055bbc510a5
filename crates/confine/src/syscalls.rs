//! What a confined child may not ask the kernel for, on top of Landlock: a seccomp filter and
//! dropped capabilities. Built in the parent, installed in the forked child (system calls only).
//!
//! - A command may create IPv4 and IPv6 sockets (inside its own network namespace) and route
//!   netlink sockets, nothing else (`EACCES`): not Unix-domain sockets (a network namespace does
//!   not isolate socket *files*, and Landlock does not check `connect` on them, so the Docker
//!   socket, D-Bus, an ssh agent or X11 would otherwise be a way out), not `AF_VSOCK` (which no
//!   network namespace isolates: the hypervisor's services), not `AF_PACKET` or any other
//!   family. `socketpair` stays allowed (it reaches nothing outside).
//! - Device nodes cannot be made (`mknod` of a character or block device; FIFOs are fine).
//! - Mounting, namespaces, modules, reboot, kexec, swap, `bpf`, `perf_event_open`, keyrings,
//!   `userfaultfd`, `io_uring` (which would open sockets and files past this filter) and file handles (`open_by_handle_at`, a classic container escape) fail with
//!   `EPERM`.
//! - `setsid` and `setpgid` fail with `EPERM` (the child itself calls `setsid` before the filter
//!   is installed): a process that left the group would survive the group kill at the deadline.
//! - Every capability is dropped, including from the bounding set, and `SECBIT_NOROOT` is locked,
//!   so a root host's child runs without root's privileges (it still owns root's files).
//!
//! The filter is written as classic BPF by hand: it is a few dozen instructions, and a crate would add
//! a dependency for less control over exactly this sequence. Only x86_64 and aarch64 have a filter;
//! elsewhere Landlock and the namespaces still apply.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const AUDIT_ARCH: u32 = if cfg!(target_arch = "x86_64") {
    0xC000_003E
} else {
    0xC000_00B7
};

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;

const LD_ABS_W: u16 = 0x20;
const JEQ_K: u16 = 0x15;
#[cfg(target_arch = "x86_64")]
const JGE_K: u16 = 0x35;
const AND_K: u16 = 0x54;
const RET_K: u16 = 0x06;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg(index: u32) -> u32 {
    16 + 8 * index
}

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// System calls refused outright with `EPERM`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn refused() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_setns,
        libc::SYS_unshare,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        // io_uring performs socket, connect and open operations without their system calls,
        // past every rule above.
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Leaving the process group would outlive the group kill at the deadline.
        libc::SYS_setsid,
        libc::SYS_setpgid,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    calls
}

/// Which filter a child gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallProfile {
    /// Commands, hooks, servers: everything above.
    Command,
    /// The browser: Unix-domain sockets may be created (Chromium's processes talk over them),
    /// but no socket of any kind may `connect`, so none reaches a service outside (the child has
    /// no network either); `setsid` and `setpgid` report success without doing anything, so
    /// helpers that detach themselves (the crash handler) stay in the group the host kills.
    Browser,
}

/// The filter program for `profile`, or `None` on an architecture without one.
pub fn filter(profile: SyscallProfile) -> Option<Vec<libc::sock_filter>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let eperm = RET_ERRNO | libc::EPERM as u32;
        let mut program = vec![
            op(LD_ABS_W, 0, 0, ARCH),
            op(JEQ_K, 1, 0, AUDIT_ARCH),
            op(RET_K, 0, 0, RET_KILL_PROCESS),
            op(LD_ABS_W, 0, 0, NR),
        ];
        // The x32 ABI reaches the same calls under other numbers.
        #[cfg(target_arch = "x86_64")]
        program.extend([op(JGE_K, 0, 1, 0x4000_0000), op(RET_K, 0, 0, eperm)]);
        let browser = profile == SyscallProfile::Browser;
        if browser {
            for call in [libc::SYS_setsid, libc::SYS_setpgid] {
                program.extend([op(JEQ_K, 0, 1, call as u32), op(RET_K, 0, 0, RET_ERRNO)]);
            }
        }
        for call in refused() {
            program.extend([op(JEQ_K, 0, 1, call as u32), op(RET_K, 0, 0, eperm)]);
        }
        if browser {
            program.extend([
                op(JEQ_K, 0, 1, libc::SYS_connect as u32),
                op(RET_K, 0, 0, RET_ERRNO | libc::EACCES as u32),
            ]);
        }
        let eacces = RET_ERRNO | libc::EACCES as u32;
        if browser {
            program.extend([
                op(JEQ_K, 0, 1, libc::SYS_socket as u32),
                op(RET_K, 0, 0, RET_ALLOW),
            ]);
        } else {
            // Commands: IPv4 and IPv6 (inside their own network namespace) and route netlink
            // (how the C library lists interfaces); Unix, vsock (which no network namespace
            // isolates), packet and every other family are refused.
            program.extend([
                op(JEQ_K, 0, 10, libc::SYS_socket as u32),
                op(LD_ABS_W, 0, 0, arg(0)),
                op(JEQ_K, 0, 1, libc::AF_INET as u32),
                op(RET_K, 0, 0, RET_ALLOW),
                op(JEQ_K, 0, 1, libc::AF_INET6 as u32),
                op(RET_K, 0, 0, RET_ALLOW),
                op(JEQ_K, 0, 3, libc::AF_NETLINK as u32),
                op(LD_ABS_W, 0, 0, arg(2)),
                op(JEQ_K, 0, 1, libc::NETLINK_ROUTE as u32),
                op(RET_K, 0, 0, RET_ALLOW),
                op(RET_K, 0, 0, eacces),
            ]);
        }
        let mut device_check = |call: libc::c_long, mode_arg: u32| {
            program.extend([
                op(JEQ_K, 0, 6, call as u32),
                op(LD_ABS_W, 0, 0, arg(mode_arg)),
                op(AND_K, 0, 0, libc::S_IFMT),
                op(JEQ_K, 2, 0, libc::S_IFCHR),
                op(JEQ_K, 1, 0, libc::S_IFBLK),
                op(RET_K, 0, 0, RET_ALLOW),
                op(RET_K, 0, 0, eperm),
            ]);
        };
        device_check(libc::SYS_mknodat, 2);
        #[cfg(target_arch = "x86_64")]
        device_check(libc::SYS_mknod, 1);
        program.push(op(RET_K, 0, 0, RET_ALLOW));
        Some(program)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// Drops every capability for good (bounding set, ambient, the three sets, `SECBIT_NOROOT`
/// locked). In the forked child only: system calls, no allocation.
pub fn drop_capabilities() -> std::io::Result<()> {
    // SAFETY: prctl/capset on the calling process with stack buffers.
    unsafe {
        for capability in 0..64 {
            // Fails with EINVAL past the kernel's last capability; nothing to drop there.
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        // NOROOT | NOROOT_LOCKED | NO_SETUID_FIXUP | NO_SETUID_FIXUP_LOCKED | KEEP_CAPS_LOCKED:
        // exec by uid 0 grants no capabilities.
        if libc::prctl(libc::PR_SET_SECUREBITS, 0x2f, 0, 0, 0) == -1
            && *libc::__errno_location() != libc::EPERM
        {
            return Err(std::io::Error::last_os_error());
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: libc::c_int,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Installs `program` (after `no_new_privs`). In the forked child only.
pub fn install(program: &[libc::sock_filter]) -> std::io::Result<()> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).unwrap_or(u16::MAX),
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: the kernel copies the program; `fprog` points at live memory for the call.
    let installed = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &fprog as *const libc::sock_fprog,
            0,
            0,
        )
    };
    if installed == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
