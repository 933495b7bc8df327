#!/usr/bin/env python3
"""tests/tools/zstd_frames.py IN OUT - copy a 64-bit little-endian ELF file
whose debug sections are zstd-compressed (SHF_COMPRESSED, ELFCOMPRESS_ZSTD),
re-compressing each one as two zstd frames, as a parallel compressor writes
them (one frame per block of input).  Uses the zstd(1) command.  The new
section contents are appended to the file and the section headers point at
them; everything else is left as it is.  Prints one line per section."""
import struct
import subprocess
import sys

SHF_COMPRESSED = 0x800
ELFCOMPRESS_ZSTD = 2
SHDR = '<IIQQQQIIQQ'


def zstd(args, data):
    return subprocess.run(['zstd', '-q'] + args, input=data, check=True,
                          capture_output=True).stdout


def frame(data):
    """one frame that states its content size, as ld's compressor writes
    it (from a pipe, zstd(1) leaves the size out)"""
    return zstd([f'--stream-size={len(data)}', '-c'], data)


def main(src, dst):
    d = bytearray(open(src, 'rb').read())
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)

    def shdr(i):
        return list(struct.unpack_from(SHDR, d, shoff + i * shentsize))

    names = shdr(shstrndx)[4]
    for i in range(shnum):
        s = shdr(i)
        name = d[names + s[0]:d.index(b'\0', names + s[0])].decode()
        if not name.startswith('.debug_') or not s[2] & SHF_COMPRESSED:
            continue
        raw = bytes(d[s[4]:s[4] + s[5]])
        ctype, _, size, _ = struct.unpack_from('<IIQQ', raw, 0)
        if ctype != ELFCOMPRESS_ZSTD:
            continue
        plain = zstd(['-dc'], raw[24:])
        assert len(plain) == size, (name, len(plain), size)
        half = len(plain) // 2
        frames = frame(plain[:half]) + frame(plain[half:])
        while len(d) % 8:
            d.append(0)
        s[4], s[5] = len(d), 24 + len(frames)
        d += raw[:24] + frames
        struct.pack_into(SHDR, d, shoff + i * shentsize, *s)
        print(f'{name}: 2 frames')
    open(dst, 'wb').write(d)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
