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
//! - No setuid or setgid file can be left behind, whoever runs janua: `chmod` and its kin with
//!   either bit, and `open`/`openat`/`creat`/`mknod` creating a file with either, fail with `EPERM`
//!   (`openat2`, whose mode a filter cannot read, with `ENOSYS`, so C libraries use `openat`).
//! - Mounting, namespaces, modules, reboot, kexec, swap, `bpf`, `perf_event_open`, keyrings,
//!   `userfaultfd`, `io_uring` (which would open sockets and files past this filter) and file handles (`open_by_handle_at`, a classic container escape) fail with
//!   `EPERM`.
//! - `setsid` and `setpgid` fail with `EPERM` (the child itself calls `setsid` before the filter
//!   is installed): a process that left the group would survive the group kill at the deadline.
//! - Every capability is dropped, including from the bounding set, and `SECBIT_NOROOT` is locked,
//!   so a root host's child runs without root's privileges (it still owns root's files).
//!
//! The filter is written as classic BPF by hand: it is about a hundred instructions (a binary
//! search over the calls it treats specially, then their checks), and a crate would add a
//! dependency for less control over exactly this sequence. Only x86_64 and aarch64 have a filter;
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

/// `fchmodat2`, the same number on x86_64 and aarch64 (the C library crate names it on one).
const FCHMODAT2: libc::c_long = 452;
/// The setuid and setgid bits of a mode.
const SET_ID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;
/// The flags with which `open` creates a file (`O_TMPFILE` without its `O_DIRECTORY`).
const CREATING: u32 = (libc::O_CREAT | (libc::O_TMPFILE & !libc::O_DIRECTORY)) as u32;

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
///
/// The system calls it treats specially are found by a binary search on the call's number, not
/// a chain of comparisons: an allowed call (nearly every call a program makes) passes about
/// seven instructions instead of about eighty, and the kernel's per-call cache of always-allowed
/// numbers, which it works out by running the filter for every number when a child installs it,
/// costs a tenth as much (about 0.1 ms of every `Bash` call before, issue 33).
pub fn filter(profile: SyscallProfile) -> Option<Vec<libc::sock_filter>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Some(assemble(&program(profile)))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = profile;
        None
    }
}

/// Where a jump goes: a labelled place in the program.
type Label = usize;

/// One piece of a program before its jumps are resolved.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// An instruction without a jump.
    Plain(libc::sock_filter),
    /// A conditional jump to `taken`, else on to the next instruction.
    Jump { code: u16, k: u32, taken: Label },
    /// The place `Label` names.
    Here(Label),
}

/// The filter for `profile`, its jumps still labels.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program(profile: SyscallProfile) -> Vec<Piece> {
    use std::collections::BTreeMap;
    const ALLOW: Label = 0;
    const EPERM: Label = 1;
    const EACCES: Label = 2;
    const NO_OP: Label = 3;
    const SOCKET: Label = 4;
    const DEVICE_ARG1: Label = 5;
    const DEVICE_ARG2: Label = 6;
    const MODE_ARG1: Label = 7;
    const MODE_ARG2: Label = 8;
    const CREATE_ARG1: Label = 9;
    const CREATE_ARG2: Label = 10;
    const ENOSYS: Label = 11;
    let eperm = RET_ERRNO | libc::EPERM as u32;
    let eacces = RET_ERRNO | libc::EACCES as u32;
    let browser = profile == SyscallProfile::Browser;
    // The first answer given to a number holds (the browser's `setsid` is a no-op, not refused).
    let mut special: BTreeMap<u32, Label> = BTreeMap::new();
    let mut answer = |call: libc::c_long, label: Label| {
        special.entry(call as u32).or_insert(label);
    };
    if browser {
        answer(libc::SYS_setsid, NO_OP);
        answer(libc::SYS_setpgid, NO_OP);
    }
    for call in refused() {
        answer(call, EPERM);
    }
    if browser {
        answer(libc::SYS_connect, EACCES);
        answer(libc::SYS_socket, ALLOW);
    } else {
        answer(libc::SYS_socket, SOCKET);
    }
    answer(libc::SYS_mknodat, DEVICE_ARG2);
    #[cfg(target_arch = "x86_64")]
    answer(libc::SYS_mknod, DEVICE_ARG1);
    // No setuid or setgid file: not by changing a mode, not by creating a file with one.
    answer(libc::SYS_fchmod, MODE_ARG1);
    answer(libc::SYS_fchmodat, MODE_ARG2);
    answer(FCHMODAT2, MODE_ARG2);
    answer(libc::SYS_openat, CREATE_ARG2);
    // Its mode lies in a structure a filter cannot read; C libraries fall back to `openat`.
    answer(libc::SYS_openat2, ENOSYS);
    #[cfg(target_arch = "x86_64")]
    {
        answer(libc::SYS_chmod, MODE_ARG1);
        answer(libc::SYS_creat, MODE_ARG1);
        answer(libc::SYS_open, CREATE_ARG1);
    }
    let mut pieces = vec![
        Piece::Plain(op(LD_ABS_W, 0, 0, ARCH)),
        Piece::Plain(op(JEQ_K, 1, 0, AUDIT_ARCH)),
        Piece::Plain(op(RET_K, 0, 0, RET_KILL_PROCESS)),
        Piece::Plain(op(LD_ABS_W, 0, 0, NR)),
    ];
    // The x32 ABI reaches the same calls under other numbers.
    #[cfg(target_arch = "x86_64")]
    pieces.push(Piece::Jump {
        code: JGE_K,
        k: 0x4000_0000,
        taken: EPERM,
    });
    let special: Vec<(u32, Label)> = special.into_iter().collect();
    let mut next_label = ENOSYS + 1;
    search(&special, &mut pieces, &mut next_label);
    pieces.extend([
        // Commands: IPv4 and IPv6 (inside their own network namespace) and route netlink (how
        // the C library lists interfaces); Unix, vsock (which no network namespace isolates),
        // packet and every other family are refused.
        Piece::Here(SOCKET),
        Piece::Plain(op(LD_ABS_W, 0, 0, arg(0))),
        Piece::Jump {
            code: JEQ_K,
            k: libc::AF_INET as u32,
            taken: ALLOW,
        },
        Piece::Jump {
            code: JEQ_K,
            k: libc::AF_INET6 as u32,
            taken: ALLOW,
        },
        Piece::Plain(op(JEQ_K, 1, 0, libc::AF_NETLINK as u32)),
        Piece::Plain(op(RET_K, 0, 0, eacces)),
        Piece::Plain(op(LD_ABS_W, 0, 0, arg(2))),
        Piece::Jump {
            code: JEQ_K,
            k: libc::NETLINK_ROUTE as u32,
            taken: ALLOW,
        },
        Piece::Plain(op(RET_K, 0, 0, eacces)),
    ]);
    // Device nodes: a character or block device is refused, a FIFO or file is fine.
    for (label, mode_arg) in [(DEVICE_ARG1, 1), (DEVICE_ARG2, 2)] {
        pieces.extend([
            Piece::Here(label),
            Piece::Plain(op(LD_ABS_W, 0, 0, arg(mode_arg))),
            Piece::Plain(op(AND_K, 0, 0, libc::S_IFMT)),
            Piece::Jump {
                code: JEQ_K,
                k: libc::S_IFCHR,
                taken: EPERM,
            },
            Piece::Jump {
                code: JEQ_K,
                k: libc::S_IFBLK,
                taken: EPERM,
            },
        ]);
        // A regular file made with a setuid or setgid mode, as `open` would.
        pieces.extend(allow_when_clear(arg(mode_arg), SET_ID_BITS, ALLOW));
        pieces.push(Piece::Plain(op(RET_K, 0, 0, eperm)));
    }
    // Modes: a setuid or setgid bit is refused.
    for (label, mode_arg) in [(MODE_ARG1, 1), (MODE_ARG2, 2)] {
        pieces.push(Piece::Here(label));
        pieces.extend(allow_when_clear(arg(mode_arg), SET_ID_BITS, ALLOW));
        pieces.push(Piece::Plain(op(RET_K, 0, 0, eperm)));
    }
    // Opening: the mode counts only when the call creates a file.
    for (label, flags_arg) in [(CREATE_ARG1, 1), (CREATE_ARG2, 2)] {
        pieces.push(Piece::Here(label));
        pieces.extend(allow_when_clear(arg(flags_arg), CREATING, ALLOW));
        pieces.extend(allow_when_clear(arg(flags_arg + 1), SET_ID_BITS, ALLOW));
        pieces.push(Piece::Plain(op(RET_K, 0, 0, eperm)));
    }
    pieces.extend([
        Piece::Here(ENOSYS),
        Piece::Plain(op(RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32)),
    ]);
    // The answers last: a classic BPF jump only goes forward.
    pieces.extend([
        Piece::Here(ALLOW),
        Piece::Plain(op(RET_K, 0, 0, RET_ALLOW)),
        Piece::Here(EPERM),
        Piece::Plain(op(RET_K, 0, 0, eperm)),
        Piece::Here(EACCES),
        Piece::Plain(op(RET_K, 0, 0, eacces)),
        Piece::Here(NO_OP),
        Piece::Plain(op(RET_K, 0, 0, RET_ERRNO)),
    ]);
    pieces
}

/// Loads the word at `offset`, keeps the bits of `mask` and jumps to `allow` when none is set;
/// otherwise goes on to the next instruction.
fn allow_when_clear(offset: u32, mask: u32, allow: Label) -> [Piece; 3] {
    [
        Piece::Plain(op(LD_ABS_W, 0, 0, offset)),
        Piece::Plain(op(AND_K, 0, 0, mask)),
        Piece::Jump {
            code: JEQ_K,
            k: 0,
            taken: allow,
        },
    ]
}

/// A binary search over `special` (sorted by number) on the number in the accumulator: each
/// number found jumps to its answer; any other is allowed.
fn search(special: &[(u32, Label)], pieces: &mut Vec<Piece>, next_label: &mut Label) {
    if special.len() <= 3 {
        for &(call, answer) in special {
            pieces.push(Piece::Jump {
                code: JEQ_K,
                k: call,
                taken: answer,
            });
        }
        pieces.push(Piece::Plain(op(RET_K, 0, 0, RET_ALLOW)));
        return;
    }
    let middle = special.len() / 2;
    let upper = *next_label;
    *next_label += 1;
    pieces.push(Piece::Jump {
        code: JGE_K,
        k: special[middle].0,
        taken: upper,
    });
    search(&special[..middle], pieces, next_label);
    pieces.push(Piece::Here(upper));
    search(&special[middle..], pieces, next_label);
}

/// The program with every jump resolved to its offset. Jumps only go forward, and this
/// program is about a hundred instructions long, so every offset fits a conditional jump's byte
/// (a unit test checks both profiles).
fn assemble(pieces: &[Piece]) -> Vec<libc::sock_filter> {
    assemble_jumps(pieces).unwrap_or_else(|| {
        // Unreachable for the programs above (tested): a program whose jumps do not fit kills
        // the child at its first call, so it never runs unfiltered.
        vec![op(RET_K, 0, 0, RET_KILL_PROCESS)]
    })
}

/// The program with every jump resolved, or `None` when a jump goes backwards, to no label, or
/// further than a byte reaches.
fn assemble_jumps(pieces: &[Piece]) -> Option<Vec<libc::sock_filter>> {
    let mut at = std::collections::HashMap::new();
    let mut position = 0usize;
    for piece in pieces {
        match piece {
            Piece::Here(label) => {
                at.insert(*label, position);
            }
            Piece::Plain(_) | Piece::Jump { .. } => position += 1,
        }
    }
    let mut program = Vec::with_capacity(position);
    for piece in pieces {
        match *piece {
            Piece::Here(_) => {}
            Piece::Plain(instruction) => program.push(instruction),
            Piece::Jump { code, k, taken } => {
                let from = program.len() + 1;
                let offset = at
                    .get(&taken)
                    .and_then(|to| to.checked_sub(from))
                    .and_then(|offset| u8::try_from(offset).ok())?;
                program.push(op(code, offset, 0, k));
            }
        }
    }
    Some(program)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a classic BPF program on one `seccomp_data` (only the instructions the filter uses).
    fn run(program: &[libc::sock_filter], arch: u32, nr: u32, args: [u32; 4]) -> u32 {
        let mut accumulator = 0u32;
        let mut pc = 0usize;
        loop {
            let instruction = program[pc];
            pc += 1;
            let k = instruction.k;
            let jump = |taken: bool| {
                usize::from(if taken {
                    instruction.jt
                } else {
                    instruction.jf
                })
            };
            match instruction.code {
                LD_ABS_W => {
                    accumulator = match k {
                        NR => nr,
                        ARCH => arch,
                        _ => args[((k - 16) / 8) as usize],
                    }
                }
                JEQ_K => pc += jump(accumulator == k),
                JGE_K => pc += jump(accumulator >= k),
                AND_K => accumulator &= k,
                RET_K => return k,
                code => panic!("unexpected instruction {code:#x}"),
            }
        }
    }

    /// What the filter must answer for call `nr` with `args`, written from the module's rules.
    fn expected(profile: SyscallProfile, nr: u32, args: [u32; 4]) -> u32 {
        let eperm = RET_ERRNO | libc::EPERM as u32;
        let eacces = RET_ERRNO | libc::EACCES as u32;
        let is = |call: libc::c_long| nr == call as u32;
        let browser = profile == SyscallProfile::Browser;
        #[cfg(target_arch = "x86_64")]
        if nr >= 0x4000_0000 {
            return eperm;
        }
        if browser && (is(libc::SYS_setsid) || is(libc::SYS_setpgid)) {
            return RET_ERRNO;
        }
        if refused().iter().any(|call| is(*call)) {
            return eperm;
        }
        if browser && is(libc::SYS_connect) {
            return eacces;
        }
        if is(libc::SYS_socket) {
            let family = args[0] as i32;
            return match family {
                _ if browser => RET_ALLOW,
                libc::AF_INET | libc::AF_INET6 => RET_ALLOW,
                libc::AF_NETLINK if args[2] as i32 == libc::NETLINK_ROUTE => RET_ALLOW,
                _ => eacces,
            };
        }
        #[cfg(target_arch = "x86_64")]
        let mode = if is(libc::SYS_mknod) {
            Some(args[1])
        } else {
            None
        };
        #[cfg(not(target_arch = "x86_64"))]
        let mode = None;
        let mode = if is(libc::SYS_mknodat) {
            Some(args[2])
        } else {
            mode
        };
        if let Some(mode) = mode
            && (matches!(mode & libc::S_IFMT, libc::S_IFCHR | libc::S_IFBLK)
                || mode & (libc::S_ISUID | libc::S_ISGID) != 0)
        {
            return eperm;
        }
        if is(libc::SYS_openat2) {
            return RET_ERRNO | libc::ENOSYS as u32;
        }
        let set_id = |mode: u32| mode & (libc::S_ISUID | libc::S_ISGID) != 0;
        let creates = |flags: u32| flags & CREATING != 0;
        #[cfg(target_arch = "x86_64")]
        {
            if (is(libc::SYS_chmod) || is(libc::SYS_creat)) && set_id(args[1]) {
                return eperm;
            }
            if is(libc::SYS_open) && creates(args[1]) && set_id(args[2]) {
                return eperm;
            }
        }
        if is(libc::SYS_fchmod) && set_id(args[1]) {
            return eperm;
        }
        if (is(libc::SYS_fchmodat) || is(FCHMODAT2)) && set_id(args[2]) {
            return eperm;
        }
        if is(libc::SYS_openat) && creates(args[2]) && set_id(args[3]) {
            return eperm;
        }
        RET_ALLOW
    }

    #[test]
    fn every_call_number_gets_the_answer_the_rules_give() {
        let create = libc::O_CREAT as u32 | libc::O_WRONLY as u32;
        let tmpfile = libc::O_TMPFILE as u32 | libc::O_RDWR as u32;
        let arguments = [
            [0, 0, 0, 0],
            [libc::AF_INET as u32, 0, 0, 0],
            [libc::AF_INET6 as u32, 0, 0, 0],
            [libc::AF_UNIX as u32, 0, 0, 0],
            [libc::AF_VSOCK as u32, 0, 0, 0],
            [libc::AF_NETLINK as u32, 0, libc::NETLINK_ROUTE as u32, 0],
            [libc::AF_NETLINK as u32, 0, libc::NETLINK_AUDIT as u32, 0],
            [0, libc::S_IFCHR | 0o600, libc::S_IFCHR | 0o600, 0],
            [0, libc::S_IFBLK, libc::S_IFBLK, 0],
            [0, libc::S_IFIFO | 0o600, libc::S_IFIFO | 0o600, 0],
            [0, libc::S_IFREG, libc::S_IFREG, 0],
            // Modes with and without the setuid and setgid bits, for chmod's kin.
            [0, 0o4755, 0o4755, 0],
            [0, 0o2755, 0o2755, 0],
            [0, 0o755, 0o755, 0o755],
            // Opening: creating with a set-id mode, creating without, not creating.
            [0, create, 0o4755, 0o4755],
            [0, create, 0o644, 0o644],
            [0, 0, create, 0o6755],
            [0, tmpfile, tmpfile, 0o2700],
            // mknod of a regular file with a set-id mode.
            [0, libc::S_IFREG | 0o4755, libc::S_IFREG | 0o4755, 0],
            [0, libc::O_RDONLY as u32, 0o4755, 0o4755],
        ];
        for profile in [SyscallProfile::Command, SyscallProfile::Browser] {
            let program = filter(profile).unwrap();
            assert!(program.len() < 200, "{} instructions", program.len());
            for nr in (0..1024).chain([0x4000_0000, 0x4000_0001, u32::MAX]) {
                for args in arguments {
                    assert_eq!(
                        run(&program, AUDIT_ARCH, nr, args),
                        expected(profile, nr, args),
                        "{profile:?}, call {nr}, arguments {args:?}"
                    );
                }
            }
            assert_eq!(
                run(&program, 0x4000_0003, 0, [0; 4]),
                RET_KILL_PROCESS,
                "another architecture"
            );
        }
    }

    #[test]
    fn a_program_whose_jumps_cannot_be_encoded_kills_instead_of_allowing() {
        let backwards = [
            Piece::Here(9),
            Piece::Jump {
                code: JEQ_K,
                k: 1,
                taken: 9,
            },
            Piece::Plain(op(RET_K, 0, 0, RET_ALLOW)),
        ];
        assert!(assemble_jumps(&backwards).is_none());
        let program = assemble(&backwards);
        assert_eq!(run(&program, AUDIT_ARCH, 0, [0; 4]), RET_KILL_PROCESS);
    }

    #[test]
    fn an_allowed_call_passes_a_few_instructions() {
        // Counted by the test interpreter's steps: at most a search's depth plus the checks.
        let program = filter(SyscallProfile::Command).unwrap();
        let mut steps = 0;
        let mut pc = 0;
        while program[pc].code != RET_K {
            let instruction = program[pc];
            pc += 1;
            steps += 1;
            if instruction.code == JEQ_K || instruction.code == JGE_K {
                let accumulator = if steps <= 2 {
                    AUDIT_ARCH
                } else {
                    libc::SYS_read as u32
                };
                let taken = if instruction.code == JEQ_K {
                    accumulator == instruction.k
                } else {
                    accumulator >= instruction.k
                };
                pc += usize::from(if taken {
                    instruction.jt
                } else {
                    instruction.jf
                });
            }
        }
        assert!(steps <= 14, "`read` passed {steps} instructions");
    }
}
