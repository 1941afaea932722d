"""Checks the hand-written signer in s3sign.py against AWS's published examples, so that
the tests which build requests by hand fail because of the server, not because of it.
No server is needed."""
import s3sign

AK = "AKIAIOSFODNN7EXAMPLE"
SK = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DATE = "20130524T000000Z"


def test_get_object_example():
    # "Example: GET Object" of the SigV4 header-auth page (Range: bytes=0-9).
    signer = s3sign.SigV4(AK, SK)
    headers = {
        "host": "examplebucket.s3.amazonaws.com",
        "range": "bytes=0-9",
        "x-amz-content-sha256": s3sign.EMPTY_SHA256,
        "x-amz-date": DATE,
    }
    sig = signer.signature("GET", "/test.txt", [], headers, s3sign.EMPTY_SHA256)
    assert sig == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"


def test_streaming_example():
    # "Example: PUT Object" of the chunked-upload page: 65 KiB of 'a' in 64 KiB chunks.
    signer = s3sign.SigV4(AK, SK)
    headers = {
        "host": "s3.amazonaws.com",
        "x-amz-date": DATE,
        "x-amz-storage-class": "REDUCED_REDUNDANCY",
        "x-amz-content-sha256": s3sign.STREAMING_PAYLOAD,
        "content-encoding": "aws-chunked",
        "x-amz-decoded-content-length": "66560",
        "content-length": "66824",
    }
    seed = signer.signature("PUT", "/examplebucket/chunkObject.txt", [], headers,
                            s3sign.STREAMING_PAYLOAD)
    assert seed == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
    assert s3sign.chunked_length(66560, 65536) == 66824
    chunks = list(s3sign.signed_chunks(signer, DATE, seed, b"a" * 66560, 65536))
    assert chunks[0].startswith(
        b"10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n")
    assert chunks[1].startswith(
        b"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n")
    assert chunks[2] == (
        b"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n")
    assert sum(len(c) for c in chunks) == 66824
    bad = list(s3sign.signed_chunks(signer, DATE, seed, b"a" * 66560, 65536, corrupt_chunk=1))
    assert bad[0] == chunks[0] and bad[1] != chunks[1]
