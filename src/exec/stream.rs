//! Reading a command's output without trusting its size: at most
//! [`STREAM_CAP`] bytes of each stream are kept, the rest is read and
//! dropped (so the command never blocks on a full pipe and its exit status
//! still comes back), and the cut is said at the end of what was kept.
//! A host that prints without end costs a bounded amount of memory.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Bytes kept per stream of one command. Far above any real tool's output
/// (a 10-minute perftest series is a few hundred KiB, nccl-tests with
/// NCCL_DEBUG=INFO on 1,024 ranks a few MiB).
pub const STREAM_CAP: u64 = 16 << 20;

/// What was dropped past the cap, as the line appended to the kept text.
pub fn cut_note(dropped: u64) -> String {
    format!("\n[rocegate: output cut at {STREAM_CAP} bytes; {dropped} more bytes were read and not kept]\n")
}

/// Reads `r` to its end, keeping at most [`STREAM_CAP`] bytes; bytes that
/// are not UTF-8 become U+FFFD.
pub async fn read_capped<R: AsyncRead + Unpin>(r: R) -> String {
    let mut kept = Vec::new();
    let mut head = r.take(STREAM_CAP);
    let _ = head.read_to_end(&mut kept).await;
    let mut rest = head.into_inner();
    let dropped = drain(&mut rest).await;
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        text += &cut_note(dropped);
    }
    text
}

/// Reads and drops the rest of `r`; returns how many bytes there were.
pub async fn drain<R: AsyncRead + Unpin>(r: &mut R) -> u64 {
    tokio::io::copy(r, &mut tokio::io::sink())
        .await
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_head_and_says_what_was_cut() {
        let big = vec![b'x'; STREAM_CAP as usize + 1000];
        let text = read_capped(&big[..]).await;
        assert!(text.starts_with("xxx"));
        assert!(
            text.ends_with("1000 more bytes were read and not kept]\n"),
            "{}",
            &text[text.len() - 100..]
        );
        assert_eq!(text.matches('x').count() as u64, STREAM_CAP);
        assert_eq!(read_capped(&b"ok\n"[..]).await, "ok\n");
    }
}
