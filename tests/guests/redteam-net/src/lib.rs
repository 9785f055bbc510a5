//! Hostile guest: `Dial` tries every way out of the sandbox it can find without a net grant: TCP
//! connect and listen, UDP, name lookup (through Rust's std and through raw `wasi:sockets` calls),
//! plus the environment and the filesystem root. It reports each attempt as `ok: ...` or `err: ...`.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::ToSocketAddrs as _;

use janua_sdk::{Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use wasip2::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};

/// Input of `Dial`.
#[derive(Deserialize, JsonSchema)]
struct DialInput {
    /// A TCP port on 127.0.0.1 where the host listens.
    tcp_port: u16,
    /// A UDP port on 127.0.0.1 where the host listens.
    udp_port: u16,
}

struct Dial;

fn report<T: std::fmt::Debug, E: std::fmt::Debug>(result: Result<T, E>) -> String {
    match result {
        Ok(value) => format!("ok: {value:?}"),
        Err(error) => format!("err: {error:?}"),
    }
}

fn loopback(port: u16) -> IpSocketAddress {
    IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (127, 0, 0, 1),
    })
}

/// Raw `wasi:sockets` TCP connect, waiting for the outcome.
fn wasi_tcp_connect(port: u16) -> Result<String, String> {
    use wasip2::sockets::{instance_network, tcp_create_socket};
    let network = instance_network::instance_network();
    let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)
        .map_err(|e| format!("create: {e:?}"))?;
    socket
        .start_connect(&network, loopback(port))
        .map_err(|e| format!("start_connect: {e:?}"))?;
    socket.subscribe().block();
    let (input, output) = socket
        .finish_connect()
        .map_err(|e| format!("finish_connect: {e:?}"))?;
    output
        .blocking_write_and_flush(b"hello from the sandbox")
        .map_err(|e| format!("write: {e:?}"))?;
    drop((input, output));
    Ok("connected".to_owned())
}

/// Raw `wasi:sockets` TCP listen on an ephemeral port.
fn wasi_tcp_listen() -> Result<String, String> {
    use wasip2::sockets::{instance_network, tcp_create_socket};
    let network = instance_network::instance_network();
    let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)
        .map_err(|e| format!("create: {e:?}"))?;
    socket
        .start_bind(&network, loopback(0))
        .map_err(|e| format!("start_bind: {e:?}"))?;
    socket.subscribe().block();
    socket
        .finish_bind()
        .map_err(|e| format!("finish_bind: {e:?}"))?;
    socket
        .start_listen()
        .map_err(|e| format!("start_listen: {e:?}"))?;
    socket.subscribe().block();
    socket
        .finish_listen()
        .map_err(|e| format!("finish_listen: {e:?}"))?;
    Ok("listening".to_owned())
}

/// Raw `wasi:sockets` UDP bind and send.
fn wasi_udp_send(port: u16) -> Result<String, String> {
    use wasip2::sockets::udp::OutgoingDatagram;
    use wasip2::sockets::{instance_network, udp_create_socket};
    let network = instance_network::instance_network();
    let socket = udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4)
        .map_err(|e| format!("create: {e:?}"))?;
    socket
        .start_bind(&network, loopback(0))
        .map_err(|e| format!("start_bind: {e:?}"))?;
    socket.subscribe().block();
    socket
        .finish_bind()
        .map_err(|e| format!("finish_bind: {e:?}"))?;
    let (_incoming, outgoing) = socket
        .stream(Some(loopback(port)))
        .map_err(|e| format!("stream: {e:?}"))?;
    outgoing
        .check_send()
        .map_err(|e| format!("check_send: {e:?}"))?;
    let sent = outgoing
        .send(&[OutgoingDatagram {
            data: b"hello from the sandbox".to_vec(),
            remote_address: None,
        }])
        .map_err(|e| format!("send: {e:?}"))?;
    Ok(format!("sent {sent}"))
}

/// Raw `wasi:sockets` name lookup.
fn wasi_lookup(name: &str) -> Result<String, String> {
    use wasip2::sockets::{instance_network, ip_name_lookup};
    let network = instance_network::instance_network();
    let stream = ip_name_lookup::resolve_addresses(&network, name)
        .map_err(|e| format!("resolve_addresses: {e:?}"))?;
    let mut found = Vec::new();
    loop {
        match stream.resolve_next_address() {
            Ok(Some(address)) => found.push(format!("{address:?}")),
            Ok(None) => break,
            Err(wasip2::sockets::network::ErrorCode::WouldBlock) => stream.subscribe().block(),
            Err(error) => return Err(format!("resolve_next_address: {error:?}")),
        }
    }
    Ok(found.join(", "))
}

impl Tool for Dial {
    type Input = DialInput;
    const NAME: &'static str = "Dial";
    const DESCRIPTION: &'static str = "Tries to reach the network.";
    const READ_ONLY: bool = true;

    fn call(input: DialInput, _ctx: &Context) -> Result<Output, ToolError> {
        let tcp = input.tcp_port;
        let udp = input.udp_port;
        let mut attempts: BTreeMap<&str, String> = BTreeMap::new();
        attempts.insert(
            "std_tcp_connect",
            report(
                std::net::TcpStream::connect(("127.0.0.1", tcp)).and_then(|mut stream| {
                    stream.write_all(b"hello from the sandbox")?;
                    let mut buf = [0u8; 16];
                    stream.read(&mut buf)
                }),
            ),
        );
        attempts.insert(
            "std_tcp_listen",
            report(std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr())),
        );
        attempts.insert(
            "std_udp_send",
            report(
                std::net::UdpSocket::bind("127.0.0.1:0").and_then(|socket| {
                    socket.send_to(b"hello from the sandbox", ("127.0.0.1", udp))
                }),
            ),
        );
        attempts.insert(
            "std_lookup",
            report(
                ("localhost", tcp)
                    .to_socket_addrs()
                    .map(|a| a.collect::<Vec<_>>()),
            ),
        );
        attempts.insert("wasi_tcp_connect", report(wasi_tcp_connect(tcp)));
        attempts.insert("wasi_tcp_listen", report(wasi_tcp_listen()));
        attempts.insert("wasi_udp_send", report(wasi_udp_send(udp)));
        attempts.insert("wasi_lookup", report(wasi_lookup("localhost")));
        let env: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
        attempts.insert("env", format!("{env:?}"));
        attempts.insert(
            "fs_root",
            report(std::fs::read_dir("/").map(|entries| entries.count())),
        );
        attempts.insert(
            "preopens",
            format!(
                "{:?}",
                wasip2::filesystem::preopens::get_directories()
                    .into_iter()
                    .map(|(_, path)| path)
                    .collect::<Vec<_>>()
            ),
        );
        let json = serde_json::to_value(&attempts)
            .map_err(|e| ToolError::new("internal", e.to_string()))?;
        Ok(Output::text(json.to_string()).with_structured(json))
    }
}

janua_sdk::export!(Dial);
