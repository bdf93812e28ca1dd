// A /document/v1 endpoint that answers every operation at once and stores nothing: the fastest server a
// feed can meet, so that what a client run costs is the client's. HTTP/1.1 and cleartext HTTP/2 (prior
// knowledge, as Vespa's container serves h2c) on one port; with -tls, TLS with ALPN (h2, then http/1.1)
// and a throwaway self-signed certificate. 512 streams per HTTP/2 connection, as the container allows.
//
//	null-endpoint -addr 127.0.0.1:0 [-tls]
//
// Prints "listening <port>" on stdout once it accepts connections; GET /_count answers the operations so far.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

var operations atomic.Int64

func handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_count" {
		fmt.Fprintf(w, "%d\n", operations.Load())
		return
	}
	// Read the whole body, as the container does before it answers.
	_, _ = io.Copy(io.Discard, r.Body)
	operations.Add(1)
	path := r.URL.Path
	id := ""
	// /document/v1/<ns>/<type>/docid/<id>: the answer names the path and the document id, as Vespa's does.
	if parts := strings.SplitN(strings.TrimPrefix(path, "/document/v1/"), "/", 4); len(parts) == 4 {
		id = "id:" + parts[0] + ":" + parts[1] + "::" + parts[3]
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	body := `{"pathId":` + strconv.Quote(path) + `,"id":` + strconv.Quote(id) + `}`
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = io.WriteString(w, body)
}

func selfSigned() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	template := x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	useTLS := flag.Bool("tls", false, "TLS with ALPN h2 and http/1.1")
	flag.Parse()
	h2 := &http2.Server{MaxConcurrentStreams: 512}
	server := &http.Server{Handler: http.HandlerFunc(handle)}
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %d\n", listener.Addr().(*net.TCPAddr).Port)
	if *useTLS {
		server.TLSConfig = &tls.Config{Certificates: []tls.Certificate{selfSigned()}, NextProtos: []string{"h2", "http/1.1"}}
		if err := http2.ConfigureServer(server, h2); err != nil {
			panic(err)
		}
		err = server.Serve(tls.NewListener(listener, server.TLSConfig))
	} else {
		server.Handler = h2c.NewHandler(http.HandlerFunc(handle), h2)
		err = server.Serve(listener)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
