//! The output's buffer: a writer that buffers, and writes either pieces ending on
//! multiples of its chunk size (into a regular file) or, like `std`'s `BufWriter`, large
//! pieces straight through (into anything else).
//!
//! `BufWriter` writes whenever the next piece does not fit: its writes end wherever a
//! piece began, mid-page. The page cache takes an aligned write in folios filled whole; a
//! write ending mid-page leaves that page to the next write to look up, lock and fill
//! again. The price is a copy of what a piece brings up to the next boundary and past the
//! last one (whole chunks between pass straight through), where `BufWriter` passes a
//! piece larger than its buffer on as it is: into `/dev/null` or a pipe, where alignment
//! gains nothing, the copy would only cost; hence the plain mode there.
//!
//! Alignment is to the bytes written through this writer, not to the file's offset:
//! a file appended to, or also written by another writer (standard error sent to the
//! same file), is written correctly, only no longer in aligned pieces. A flush writes
//! what is buffered; the chunks after it still end on the same multiples.

use std::io::{self, Write};

/// A writer that buffers up to `chunk` bytes (see the module docs): aligned, it writes
/// each time a chunk boundary (a multiple of `chunk` bytes written through it) is
/// reached; plain, whenever a piece does not fit, and a piece of `chunk` bytes or more
/// straight from where it is.
#[derive(Debug)]
pub struct Buffered<W: Write> {
    inner: W,
    buf: Vec<u8>,
    chunk: usize,
    aligned: bool,
    /// Aligned, where `buf` begins within its chunk: what was written through this
    /// writer, modulo `chunk` (not 0 only after a flush).
    at: usize,
    /// Whether the inner writer panicked during a write: dropping then writes nothing
    /// more (as `BufWriter` does).
    panicked: bool,
}

impl<W: Write> Buffered<W> {
    /// `inner` written in pieces that end on multiples of `chunk` bytes (at least 1).
    pub fn aligned(chunk: usize, inner: W) -> Buffered<W> {
        Buffered::new(chunk, inner, true)
    }

    /// `inner` written as `std`'s `BufWriter` of `capacity` bytes writes.
    pub fn plain(capacity: usize, inner: W) -> Buffered<W> {
        Buffered::new(capacity, inner, false)
    }

    fn new(chunk: usize, inner: W, aligned: bool) -> Buffered<W> {
        let chunk = chunk.max(1);
        Buffered {
            inner,
            buf: Vec::with_capacity(chunk),
            chunk,
            aligned,
            at: 0,
            panicked: false,
        }
    }

    /// Writes `data` to the inner writer as it is.
    fn straight(&mut self, data: &[u8]) -> io::Result<()> {
        self.panicked = true;
        let written = self.inner.write_all(data);
        self.panicked = false;
        written
    }

    /// The writer written to (for the tests: what it has been given so far).
    #[cfg(test)]
    fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Writes what is buffered (a piece ending on a chunk boundary, or short of one on a
    /// flush).
    fn drain(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let written = self.straight(&buf);
        self.buf = buf;
        written?;
        if self.aligned {
            self.at = (self.at + self.buf.len()) % self.chunk;
        }
        self.buf.clear();
        Ok(())
    }
}

impl<W: Write> Write for Buffered<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        if !self.aligned {
            if data.len() < self.chunk - self.buf.len() {
                self.buf.extend_from_slice(data);
                return Ok(());
            }
            self.drain()?;
            if data.len() < self.chunk {
                self.buf.extend_from_slice(data);
                return Ok(());
            }
            return self.straight(data);
        }
        loop {
            let room = self.chunk - self.at - self.buf.len();
            if data.len() < room {
                self.buf.extend_from_slice(data);
                return Ok(());
            }
            if self.buf.is_empty() && self.at == 0 {
                // Whole chunks go straight through, unbuffered.
                let whole = data.len() - data.len() % self.chunk;
                self.straight(&data[..whole])?;
                data = &data[whole..];
                continue;
            }
            let (filling, rest) = data.split_at(room);
            self.buf.extend_from_slice(filling);
            data = rest;
            self.drain()?;
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Buffered<W> {
    fn drop(&mut self) {
        if !self.panicked {
            let _ = self.drain();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Records each write's length, as a file's offsets would see them.
    #[derive(Default)]
    struct Recorded {
        bytes: Vec<u8>,
        writes: Vec<usize>,
    }

    impl Write for &mut Recorded {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.bytes.extend_from_slice(data);
            self.writes.push(data.len());
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    proptest! {
        /// Whatever the pieces and flushes, the bytes arrive whole and in order; aligned,
        /// every write but those a flush forced ends on a multiple of the chunk; plain,
        /// every write is the buffer (at most a chunk) or a piece of a chunk or more.
        #[test]
        fn pieces_arrive_whole_and_writes_end_on_chunk_boundaries_where_aligned(
            chunk in 1usize..64,
            aligned in any::<bool>(),
            pieces in proptest::collection::vec((0usize..200, any::<bool>()), 0..40),
        ) {
            let mut recorded = Recorded::default();
            let mut want = Vec::new();
            let mut flushed_at = Vec::new();
            let lens: Vec<usize> = pieces.iter().map(|(len, _)| *len).collect();
            {
                let mut out = if aligned {
                    Buffered::aligned(chunk, &mut recorded)
                } else {
                    Buffered::plain(chunk, &mut recorded)
                };
                for (i, (len, flush)) in pieces.iter().enumerate() {
                    let piece: Vec<u8> = (0..*len).map(|j| (i * 7 + j) as u8).collect();
                    out.write_all(&piece).unwrap();
                    want.extend_from_slice(&piece);
                    if *flush {
                        out.flush().unwrap();
                        flushed_at.push(want.len());
                    }
                }
            }
            prop_assert!(recorded.bytes == want);
            let mut end = 0;
            for len in &recorded.writes {
                end += len;
                if aligned {
                    prop_assert!(
                        end % chunk == 0 || flushed_at.contains(&end) || end == want.len(),
                        "a write ended at {} (chunk {})", end, chunk
                    );
                } else {
                    prop_assert!(
                        *len <= chunk || lens.contains(len),
                        "a write of {} bytes (chunk {})", len, chunk
                    );
                }
            }
        }
    }

    /// A piece larger than a chunk, arriving on a boundary, is written straight through:
    /// its whole chunks in one write, its tail buffered.
    #[test]
    fn whole_chunks_of_a_large_piece_go_straight_through() {
        let mut recorded = Recorded::default();
        {
            let mut out = Buffered::aligned(4, &mut recorded);
            out.write_all(b"0123456789").unwrap();
            assert_eq!(out.get_ref().writes, vec![8]);
        }
        assert_eq!(recorded.writes, vec![8, 2]);
        assert_eq!(recorded.bytes, b"0123456789");
    }

    /// Plain, a piece of a chunk or more is written as it is, after what was buffered.
    #[test]
    fn plain_writes_a_large_piece_as_it_is() {
        let mut recorded = Recorded::default();
        {
            let mut out = Buffered::plain(4, &mut recorded);
            out.write_all(b"ab").unwrap();
            out.write_all(b"0123456789").unwrap();
            out.write_all(b"c").unwrap();
        }
        assert_eq!(recorded.writes, vec![2, 10, 1]);
        assert_eq!(recorded.bytes, b"ab0123456789c");
    }
}
