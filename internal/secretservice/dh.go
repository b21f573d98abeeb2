package secretservice

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"

	"github.com/cua-host/cua-host/internal/credential"
)

// Algorithm is the Secret Service session algorithm this package opens: Diffie-Hellman
// in the second Oakley group of RFC 2409 (1024 bits, generator 2), the shared secret as
// 128 big-endian bytes through HKDF-SHA256 with no salt and empty info to a 16-byte key,
// and each secret AES-128-CBC with PKCS#7 padding under that key, the IV in the secret's
// parameters.
const Algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

// oakley2 is the prime of RFC 2409 section 6.2: 2^1024 - 2^960 - 1 + 2^64 * ([2^894 pi] + 129093).
var oakley2, _ = new(big.Int).SetString(
	"FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD1"+
		"29024E088A67CC74020BBEA63B139B22514A08798E3404DD"+
		"EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245"+
		"E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"+
		"EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381"+
		"FFFFFFFFFFFFFFFF", 16)

// primeBytes is the length of oakley2, and of the shared secret given to HKDF.
const primeBytes = 128

// keyBytes is the AES-128 key's length.
const keyBytes = 16

// errBadSecret is a secret the service sent that does not decrypt: a wrong IV length, a
// ciphertext that is not whole blocks, or bad padding. It names nothing of the content.
var errBadSecret = errors.New("secret service: the secret does not decrypt under the session's key")

// keyPair is one side of the exchange.
type keyPair struct {
	priv *big.Int
	pub  []byte // 2^priv mod p, big-endian, as the service receives it
}

// newKeyPair draws a private exponent of 1024 random bits (reduced below p-1, at least 2).
func newKeyPair() (*keyPair, error) {
	b := make([]byte, primeBytes)
	defer clear(b)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("secret service: key: %w", err)
	}
	priv := new(big.Int).SetBytes(b)
	pm3 := new(big.Int).Sub(oakley2, big.NewInt(3))
	priv.Mod(priv, pm3).Add(priv, big.NewInt(2)) // in [2, p-2]
	pub := new(big.Int).Exp(big.NewInt(2), priv, oakley2)
	return &keyPair{priv: priv, pub: pub.Bytes()}, nil
}

// wipe zeroes the private exponent's words and leaves it 0.
func (k *keyPair) wipe() {
	clear(k.priv.Bits())
	k.priv.SetInt64(0)
}

// sessionKey derives the AES key from the service's public key. A public key outside
// (1, p-1) is refused: it would make the shared secret predictable.
func (k *keyPair) sessionKey(peer []byte) ([]byte, error) {
	y := new(big.Int).SetBytes(peer)
	if y.Cmp(big.NewInt(1)) <= 0 || y.Cmp(new(big.Int).Sub(oakley2, big.NewInt(1))) >= 0 {
		return nil, errors.New("secret service: the service's public key is out of range")
	}
	z := new(big.Int).Exp(y, k.priv, oakley2)
	defer clear(z.Bits())
	shared := z.FillBytes(make([]byte, primeBytes))
	defer clear(shared)
	key, err := hkdf.Key(sha256.New, shared, nil, "", keyBytes)
	if err != nil {
		return nil, fmt.Errorf("secret service: derive key: %w", err)
	}
	return key, nil
}

// decrypt decrypts value (AES-128-CBC under key, IV iv, PKCS#7 padding) into a buffer
// of its own, which the returned Secret owns. A ciphertext longer than a secret may be
// is credential.ErrTooLarge before anything is decrypted.
func decrypt(key, iv, value []byte) (*credential.Secret, error) {
	if len(iv) != aes.BlockSize || len(value) == 0 || len(value)%aes.BlockSize != 0 {
		return nil, errBadSecret
	}
	if len(value) > credential.MaxSecretBytes+aes.BlockSize {
		return nil, credential.ErrTooLarge
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret service: %w", err)
	}
	buf := make([]byte, len(value))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, value)
	pad := int(buf[len(buf)-1])
	bad := byte(0)
	if pad == 0 || pad > aes.BlockSize {
		bad, pad = 1, 1
	}
	for _, c := range buf[len(buf)-pad:] {
		bad |= c ^ byte(pad)
	}
	n := len(buf) - pad
	if bad != 0 || n > credential.MaxSecretBytes {
		clear(buf)
		if bad != 0 {
			return nil, errBadSecret
		}
		return nil, credential.ErrTooLarge
	}
	clear(buf[n:])
	return credential.NewSecret(buf, n), nil
}
