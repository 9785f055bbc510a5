//! Content sniffing by magic bytes: the image formats Read returns inline, the binary formats it
//! names when refusing a file, and image dimensions parsed from the first header bytes.
//!
//! Everything here works on byte slices only, so the rules are unit tested natively.

/// An image format Read returns as an image block (the formats the Messages API accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageFormat {
    /// The IANA media type.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
            ImageFormat::Webp => "image/webp",
        }
    }
}

/// What the first bytes of a file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// An image Read returns inline.
    Image(ImageFormat),
    /// A binary format Read refuses, described for the model.
    Binary(&'static str),
}

/// The description of binary data no magic number identified.
pub(crate) const UNKNOWN_BINARY: &str = "unknown binary data (contains NUL bytes)";

/// Identifies `head` (the first bytes of a file) by its magic number; `None` when no known format
/// matches, in which case the caller decides text or binary by looking for NUL bytes.
pub(crate) fn sniff(head: &[u8]) -> Option<Sniffed> {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    let image = if head.starts_with(PNG) {
        Some(ImageFormat::Png)
    } else if head.starts_with(b"\xff\xd8\xff") {
        Some(ImageFormat::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        Some(ImageFormat::Webp)
    } else {
        None
    };
    if let Some(format) = image {
        return Some(Sniffed::Image(format));
    }
    let binary = if head.starts_with(b"%PDF-") {
        "PDF document"
    } else if head.starts_with(b"PK\x03\x04")
        || head.starts_with(b"PK\x05\x06")
        || head.starts_with(b"PK\x07\x08")
    {
        // Office documents, jars, wheels and epubs are all ZIP containers.
        "ZIP archive (or a ZIP-based format such as docx, xlsx or jar)"
    } else if head.starts_with(b"\x1f\x8b") {
        "gzip compressed data"
    } else if head.starts_with(b"\x7fELF") {
        "ELF executable"
    } else if head.starts_with(b"\0asm") {
        "WebAssembly module"
    } else if head.starts_with(b"SQLite format 3\0") {
        "SQLite database"
    } else {
        return None;
    };
    Some(Sniffed::Binary(binary))
}

/// Width and height in pixels, parsed from the header of `data`; `None` when the header is cut or
/// unusual (dimensions are informative only, so no effort goes into odd files).
pub(crate) fn dimensions(format: ImageFormat, data: &[u8]) -> Option<(u32, u32)> {
    match format {
        ImageFormat::Png => png_dimensions(data),
        ImageFormat::Jpeg => jpeg_dimensions(data),
        ImageFormat::Gif => Some((u32::from(u16_le(data, 6)?), u32::from(u16_le(data, 8)?))),
        ImageFormat::Webp => webp_dimensions(data),
    }
}

/// PNG: the IHDR chunk always comes first, holding big-endian width and height.
fn png_dimensions(data: &[u8]) -> Option<(u32, u32)> {
    if data.get(12..16)? != b"IHDR" {
        return None;
    }
    Some((u32_be(data, 16)?, u32_be(data, 20)?))
}

/// JPEG: walk the marker segments up to the first start-of-frame, which holds the size.
fn jpeg_dimensions(data: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        if *data.get(at)? != 0xff {
            return None;
        }
        // Any number of 0xff fill bytes may precede a marker.
        while *data.get(at)? == 0xff {
            at += 1;
        }
        let marker = *data.get(at)?;
        at += 1;
        match marker {
            // Markers without a length field.
            0x01 | 0xd0..=0xd8 => {}
            // End of image or start of scan before any frame header: no size to find.
            0xd9 | 0xda => return None,
            // SOF0..SOF15, except DHT (c4), JPG (c8) and DAC (cc) which share the range.
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                // length (2), sample precision (1), height (2), width (2)
                let height = u16_be(data, at + 3)?;
                let width = u16_be(data, at + 5)?;
                return Some((u32::from(width), u32::from(height)));
            }
            _ => {
                let length = usize::from(u16_be(data, at)?);
                if length < 2 {
                    return None;
                }
                at += length;
            }
        }
    }
}

/// WebP: the first chunk is `VP8 ` (lossy), `VP8L` (lossless) or `VP8X` (extended), each with
/// its own size encoding.
fn webp_dimensions(data: &[u8]) -> Option<(u32, u32)> {
    match data.get(12..16)? {
        b"VP8 " => {
            // A key frame's start code, then 14-bit width and height (top bits are scaling).
            if data.get(23..26)? != [0x9d, 0x01, 0x2a] {
                return None;
            }
            let width = u16_le(data, 26)? & 0x3fff;
            let height = u16_le(data, 28)? & 0x3fff;
            Some((u32::from(width), u32::from(height)))
        }
        b"VP8L" => {
            if *data.get(20)? != 0x2f {
                return None;
            }
            // 14 bits of width - 1, then 14 bits of height - 1, little-endian.
            let bits = u32_le(data, 21)?;
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => {
            // Flags (4 bytes), then 24-bit canvas width - 1 and height - 1.
            Some((u24_le(data, 24)? + 1, u24_le(data, 27)? + 1))
        }
        _ => None,
    }
}

fn bytes<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    data.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn u16_le(data: &[u8], at: usize) -> Option<u16> {
    bytes(data, at).map(u16::from_le_bytes)
}

fn u16_be(data: &[u8], at: usize) -> Option<u16> {
    bytes(data, at).map(u16::from_be_bytes)
}

fn u32_le(data: &[u8], at: usize) -> Option<u32> {
    bytes(data, at).map(u32::from_le_bytes)
}

fn u32_be(data: &[u8], at: usize) -> Option<u32> {
    bytes(data, at).map(u32::from_be_bytes)
}

fn u24_le(data: &[u8], at: usize) -> Option<u32> {
    let [a, b, c] = bytes::<3>(data, at)?;
    Some(u32::from_le_bytes([a, b, c, 0]))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A PNG header (signature and IHDR) of `width` x `height`; the CRC is not checked by Read.
    pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
        let mut data = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        data.extend_from_slice(&width.to_be_bytes());
        data.extend_from_slice(&height.to_be_bytes());
        data.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        data
    }

    fn jpeg(width: u16, height: u16) -> Vec<u8> {
        let mut data = vec![0xff, 0xd8];
        // An APP0 (JFIF) segment to skip, with a fill byte before the next marker.
        data.extend_from_slice(&[0xff, 0xe0, 0x00, 0x10]);
        data.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        // A DHT segment, which sits in the SOF range but is not a frame header.
        data.extend_from_slice(&[0xff, 0xff, 0xc4, 0x00, 0x03, 0x00]);
        data.extend_from_slice(&[0xff, 0xc2, 0x00, 0x11, 0x08]);
        data.extend_from_slice(&height.to_be_bytes());
        data.extend_from_slice(&width.to_be_bytes());
        data.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
        data
    }

    fn gif(width: u16, height: u16) -> Vec<u8> {
        let mut data = b"GIF89a".to_vec();
        data.extend_from_slice(&width.to_le_bytes());
        data.extend_from_slice(&height.to_le_bytes());
        data.extend_from_slice(&[0xf7, 0, 0]);
        data
    }

    fn webp(chunk: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut data = b"RIFF\0\0\0\0WEBP".to_vec();
        data.extend_from_slice(chunk);
        data.extend_from_slice(&[0, 0, 0, 0]);
        data.extend_from_slice(body);
        data
    }

    #[test]
    fn sniffs_images_and_binary_formats() {
        let cases: &[(&[u8], Option<Sniffed>)] = &[
            (&png(1, 1), Some(Sniffed::Image(ImageFormat::Png))),
            (
                b"\xff\xd8\xff\xe0\0\x10JFIF",
                Some(Sniffed::Image(ImageFormat::Jpeg)),
            ),
            (b"GIF87a\x01\0", Some(Sniffed::Image(ImageFormat::Gif))),
            (b"GIF89a\x01\0", Some(Sniffed::Image(ImageFormat::Gif))),
            (
                b"RIFF\x24\0\0\0WEBPVP8 ",
                Some(Sniffed::Image(ImageFormat::Webp)),
            ),
            (b"RIFF\x24\0\0\0WAVEfmt ", None),
            (b"%PDF-1.7\n", Some(Sniffed::Binary("PDF document"))),
            (
                b"PK\x03\x04\x14\0",
                Some(Sniffed::Binary(
                    "ZIP archive (or a ZIP-based format such as docx, xlsx or jar)",
                )),
            ),
            (
                b"\x1f\x8b\x08\0",
                Some(Sniffed::Binary("gzip compressed data")),
            ),
            (b"\x7fELF\x02\x01", Some(Sniffed::Binary("ELF executable"))),
            (
                b"\0asm\x01\0\0\0",
                Some(Sniffed::Binary("WebAssembly module")),
            ),
            (
                b"SQLite format 3\0\x10\0",
                Some(Sniffed::Binary("SQLite database")),
            ),
            (b"fn main() {}\n", None),
            (b"", None),
            (b"\x89PN", None),
        ];
        for (head, expected) in cases {
            assert_eq!(sniff(head), *expected, "{head:?}");
        }
    }

    #[test]
    fn parses_dimensions_of_each_format() {
        let mut vp8 = vec![0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a];
        vp8.extend_from_slice(&(640u16 | 0x4000).to_le_bytes());
        vp8.extend_from_slice(&480u16.to_le_bytes());
        let vp8l_bits: u32 = (100 - 1) | ((50 - 1) << 14);
        let mut vp8l = vec![0x2f];
        vp8l.extend_from_slice(&vp8l_bits.to_le_bytes());
        let mut vp8x = vec![0x10, 0, 0, 0];
        vp8x.extend_from_slice(&[0xff, 0x03, 0x00]); // 1023 + 1
        vp8x.extend_from_slice(&[0x1f, 0x00, 0x00]); // 31 + 1
        type Case = (ImageFormat, Vec<u8>, Option<(u32, u32)>);
        let cases: Vec<Case> = vec![
            (ImageFormat::Png, png(64, 32), Some((64, 32))),
            (ImageFormat::Png, png(64, 32)[..20].to_vec(), None),
            (ImageFormat::Jpeg, jpeg(320, 200), Some((320, 200))),
            (ImageFormat::Jpeg, jpeg(320, 200)[..30].to_vec(), None),
            (ImageFormat::Jpeg, vec![0xff, 0xd8, 0xff, 0xda, 0, 2], None),
            (ImageFormat::Gif, gif(7, 9), Some((7, 9))),
            (ImageFormat::Gif, b"GIF89a\x07".to_vec(), None),
            (ImageFormat::Webp, webp(b"VP8 ", &vp8), Some((640, 480))),
            (ImageFormat::Webp, webp(b"VP8L", &vp8l), Some((100, 50))),
            (ImageFormat::Webp, webp(b"VP8X", &vp8x), Some((1024, 32))),
            (ImageFormat::Webp, webp(b"ALPH", &vp8x), None),
        ];
        for (format, data, expected) in cases {
            assert_eq!(dimensions(format, &data), expected, "{format:?} {data:?}");
        }
    }
}
