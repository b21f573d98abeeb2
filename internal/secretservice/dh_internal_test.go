package secretservice

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"math/big"
	"testing"

	"github.com/cua-host/cua-host/internal/credential"
)

// TestOakleyPrime checks the constant against what RFC 2409 says of the second Oakley
// group: a 1024-bit safe prime whose top and bottom 64 bits are all ones.
func TestOakleyPrime(t *testing.T) {
	if oakley2.BitLen() != 1024 {
		t.Fatalf("the prime has %d bits, want 1024", oakley2.BitLen())
	}
	ones := new(big.Int).SetUint64(^uint64(0))
	if low := new(big.Int).And(oakley2, ones); low.Cmp(ones) != 0 {
		t.Errorf("the prime's low 64 bits are %x, want all ones", low)
	}
	if high := new(big.Int).Rsh(oakley2, 960); high.Cmp(ones) != 0 {
		t.Errorf("the prime's high 64 bits are %x, want all ones", high)
	}
	q := new(big.Int).Rsh(oakley2, 1)
	if !oakley2.ProbablyPrime(20) || !q.ProbablyPrime(20) {
		t.Error("the prime is not a safe prime")
	}
}

// encrypt is the service's side of the algorithm, for the tests.
func encrypt(t *testing.T, key, iv, plain []byte) []byte {
	t.Helper()
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	msg := append(append([]byte(nil), plain...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(msg, msg)
	return msg
}

// TestExchange runs both sides of the Diffie-Hellman exchange: they derive one key.
func TestExchange(t *testing.T) {
	a, err := newKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b, err := newKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	ka, err := a.sessionKey(b.pub)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.sessionKey(a.pub)
	if err != nil {
		t.Fatal(err)
	}
	if len(ka) != keyBytes || !bytes.Equal(ka, kb) {
		t.Fatalf("the two sides derived %x and %x, want one 16-byte key", ka, kb)
	}
	for _, bad := range [][]byte{{}, {1}, new(big.Int).Sub(oakley2, big.NewInt(1)).Bytes(), oakley2.Bytes()} {
		if _, err := a.sessionKey(bad); err == nil {
			t.Errorf("sessionKey(%x) accepted a public key out of range", bad)
		}
	}
	words := a.priv.Bits()
	a.wipe()
	for _, w := range words {
		if w != 0 {
			t.Fatalf("after wipe the private exponent's memory holds %x", words)
		}
	}
}

var decryptSeeds = [][]byte{[]byte("S3cr3t one"), {}, bytes.Repeat([]byte("x"), 16), []byte("Grüße\n"), bytes.Repeat([]byte("y"), credential.MaxSecretBytes)}

func TestDecrypt(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 16)
	iv := bytes.Repeat([]byte{9}, 16)
	for _, plain := range decryptSeeds {
		s, err := decrypt(key, iv, encrypt(t, key, iv, plain))
		if err != nil {
			t.Fatalf("decrypt(%q) = %v", plain, err)
		}
		b := s.Bytes()
		if !bytes.Equal(b, plain) {
			t.Fatalf("decrypt = %q, want %q", b, plain)
		}
		whole := b[:cap(b)]
		s.Wipe()
		if bytes.ContainsFunc(whole, func(r rune) bool { return r != 0 }) {
			t.Fatalf("after Wipe the buffer holds %q", whole)
		}
	}
	good := encrypt(t, key, iv, []byte("abc"))
	tampered := append([]byte(nil), good...)
	tampered[len(tampered)-1] ^= 0x55 // the padding no longer decrypts to n bytes of n
	for _, tc := range []struct {
		name      string
		iv, value []byte
		want      error
	}{
		{"short iv", iv[:8], good, errBadSecret},
		{"empty", iv, nil, errBadSecret},
		{"not whole blocks", iv, good[:15], errBadSecret},
		{"bad padding", iv, tampered, errBadSecret},
		{"too large", iv, encrypt(t, key, iv, bytes.Repeat([]byte("z"), credential.MaxSecretBytes+1)), credential.ErrTooLarge},
	} {
		if _, err := decrypt(key, tc.iv, tc.value); !errors.Is(err, tc.want) {
			t.Errorf("%s: decrypt = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzDecrypt(f *testing.F) {
	key := bytes.Repeat([]byte{7}, 16)
	iv := bytes.Repeat([]byte{9}, 16)
	for _, s := range decryptSeeds[:4] {
		f.Add(iv, encrypt(&testing.T{}, key, iv, s))
	}
	f.Fuzz(func(t *testing.T, iv, value []byte) {
		s, err := decrypt(key, iv, value)
		if err != nil {
			return
		}
		if len(s.Bytes()) > credential.MaxSecretBytes || len(s.Bytes()) >= len(value) {
			t.Fatalf("decrypt of %d bytes gave %d", len(value), len(s.Bytes()))
		}
		s.Wipe()
	})
}
