//! Which IP addresses are private: loopback, RFC 1918, link-local (cloud metadata services live at
//! 169.254.169.254 and fd00:ec2::254), CGNAT, unspecified, multicast, broadcast, documentation and
//! benchmarking ranges, IPv6 unique-local and site-local, and every IPv6 form that carries an IPv4
//! address (IPv4-mapped, IPv4-compatible, SIIT IPv4-translated, NAT64 well-known and local-use,
//! 6to4, Teredo, ISATAP): such a form is as private as any IPv4 address it carries, since that is
//! what a translator or tunnel reaches. A request reaches such an address only when the operator
//! or the grant names the host.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `address` is not public, or `None` when it is.
pub(crate) fn private_range(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => private_v4(v4),
        IpAddr::V6(v6) => private_v6(v6),
    }
}

fn private_v4(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    let range = match (a, b, c) {
        (0, _, _) => "unspecified (0.0.0.0/8)",
        (10, _, _) => "private (10.0.0.0/8)",
        (100, 64..=127, _) => "shared CGNAT (100.64.0.0/10)",
        (127, _, _) => "loopback (127.0.0.0/8)",
        (169, 254, _) => "link-local and cloud metadata (169.254.0.0/16)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 88, 99) => "6to4 relay anycast (192.88.99.0/24)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast (224.0.0.0/4)",
        (240..=255, _, _) => "reserved and broadcast (240.0.0.0/4)",
        _ => return None,
    };
    Some(range)
}

fn private_v6(address: Ipv6Addr) -> Option<&'static str> {
    let carried = embedded_v4(address);
    if !carried.is_empty() {
        // The IPv4 address is what gets reached (directly, through a translator or a tunnel).
        return carried.into_iter().find_map(private_v4);
    }
    let segments = address.segments();
    let range = if address.is_unspecified() {
        "unspecified (::)"
    } else if address.is_loopback() {
        "loopback (::1)"
    } else if segments[0] & 0xfe00 == 0xfc00 {
        "unique local (fc00::/7)"
    } else if segments[0] & 0xffc0 == 0xfe80 {
        "link-local (fe80::/10)"
    } else if segments[0] & 0xffc0 == 0xfec0 {
        "site-local (fec0::/10)"
    } else if segments[0] & 0xff00 == 0xff00 {
        "multicast (ff00::/8)"
    } else if segments[0] == 0x2001 && segments[1] == 0x0db8 {
        "documentation (2001:db8::/32)"
    } else if segments[0] == 0x0100 && segments[1..4] == [0, 0, 0] {
        "discard-only (100::/64)"
    } else {
        return None;
    };
    Some(range)
}

/// The IPv4 addresses an IPv6 address carries (empty for a plain IPv6 address):
/// - IPv4-mapped `::ffff:a.b.c.d`, the deprecated IPv4-compatible `::a.b.c.d` and SIIT's
///   IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765);
/// - NAT64 `64:ff9b::a.b.c.d` (RFC 6052) and the local-use `64:ff9b:1::/48` (RFC 8215), read at
///   both the /96 and the /48 position (the operator's translator decides which);
/// - 6to4 `2002:aabb:ccdd::/48` (RFC 3056);
/// - Teredo `2001:0:SSSS:SSSS:…:CCCC:CCCC` (RFC 4380): the server and the client, whose address is
///   stored inverted;
/// - ISATAP interface identifiers `…:0:5efe:a.b.c.d` and `…:200:5efe:a.b.c.d` (RFC 5214), under
///   any prefix.
fn embedded_v4(address: Ipv6Addr) -> Vec<Ipv4Addr> {
    let segments = address.segments();
    let octets = address.octets();
    let v4 =
        |at: [usize; 4]| Ipv4Addr::new(octets[at[0]], octets[at[1]], octets[at[2]], octets[at[3]]);
    let tail = v4([12, 13, 14, 15]);
    if let Some(mapped) = address.to_ipv4_mapped() {
        return vec![mapped];
    }
    if segments[..6] == [0, 0, 0, 0, 0, 0] && !address.is_loopback() && !address.is_unspecified() {
        return vec![tail];
    }
    if segments[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return vec![tail];
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return vec![tail];
    }
    if segments[..3] == [0x64, 0xff9b, 1] {
        return vec![tail, v4([6, 7, 9, 10])];
    }
    if segments[0] == 0x2002 {
        return vec![v4([2, 3, 4, 5])];
    }
    if segments[..2] == [0x2001, 0] {
        let client = Ipv4Addr::from(!u32::from(tail));
        return vec![v4([4, 5, 6, 7]), client];
    }
    if matches!(segments[4], 0 | 0x200) && segments[5] == 0x5efe {
        return vec![tail];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_table() {
        let private = [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b:1::10.0.0.1",
            "64:ff9b:1:7f00:1::",
            "::ffff:0:127.0.0.1",
            "::ffff:0:169.254.169.254",
            "2002:7f00:0001::",
            "2002:a9fe:a9fe::1",
            "2001:0:7f00:1::1",
            "2001:0:0808:0808::f5ff:fffe",
            "2606:4700::5efe:10.0.0.1",
            "2606:4700::200:5efe:192.168.0.1",
            "2001:db8::1",
        ];
        for text in private {
            let address: IpAddr = text.parse().unwrap();
            assert!(private_range(address).is_some(), "{text} should be private");
        }
        let public = [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "169.255.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "64:ff9b:1:808:8:800:808:808",
            "::ffff:0:8.8.8.8",
            "2002:0808:0808::",
            "2001:0:0808:0808::f7f7:f7f7",
            "2606:4700::5efe:8.8.8.8",
        ];
        for text in public {
            let address: IpAddr = text.parse().unwrap();
            assert_eq!(private_range(address), None, "{text} should be public");
        }
    }
}
