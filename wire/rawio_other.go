//go:build !linux

package wire

import "net"

// rawConn is a connection read and written as it is (rawio_linux.go says why Linux does otherwise).
type rawConn struct{ c net.Conn }

func newRawConn(c net.Conn) rawConn { return rawConn{c: c} }

func (r rawConn) Write(b []byte) (int, error) { return r.c.Write(b) }

func (r rawConn) Read(b []byte) (int, error) { return r.c.Read(b) }

// rawPacketConn is a PacketConn used as it is.
type rawPacketConn struct{ pc net.PacketConn }

func newRawPacketConn(pc net.PacketConn) *rawPacketConn { return &rawPacketConn{pc: pc} }

func (r *rawPacketConn) ReadFrom(b []byte) (int, string, error) {
	n, addr, err := r.pc.ReadFrom(b)
	if addr == nil {
		return n, "", err
	}
	return n, addr.String(), err
}

func (r *rawPacketConn) WriteTo(b []byte, addr *net.UDPAddr) (int, error) {
	return r.pc.WriteTo(b, addr)
}
