package wire

import (
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// The connections' reads and writes are raw system calls on the socket, made through
// syscall.RawConn so that the runtime's poller still waits for readiness and deadlines still hold.
// The sockets are non-blocking, so such a call never blocks. What it saves is the runtime's
// entersyscall: every ordinary system call wakes the runtime's monitor thread (sysmon) when it
// sleeps, and a node's process sleeps between any two messages. Each wake-up is a futex, a
// nanosleep and two context switches of a thread that then does nothing: in a profile of a
// 200-node Chang-Roberts run (perf record -a -g, every node process), sysmon took 29% of the nodes'
// CPU time. Errors read as the net package's own (a *net.OpError around the system call's error).

// rawConn is a TCP connection read and written with raw system calls.
type rawConn struct {
	c  net.Conn
	rc syscall.RawConn
}

// newRawConn wraps c; a connection that is no *net.TCPConn (or *net.UnixConn) is read and written
// as it is.
func newRawConn(c net.Conn) rawConn {
	r := rawConn{c: c}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			r.rc = rc
		}
	}
	return r
}

// Write writes all of b (a short write is finished once the socket can take more), as
// net.Conn.Write does.
func (r rawConn) Write(b []byte) (int, error) {
	if r.rc == nil {
		return r.c.Write(b)
	}
	n, short := 0, false
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return false // wait until the socket can take more
			case e != 0:
				errno = e
				return true
			case m == 0:
				short = true // a socket takes something or says EAGAIN: never expected
				return true
			}
			n += int(m)
		}
		return true
	})
	switch {
	case err != nil:
	case errno != 0:
		err = os.NewSyscallError("write", errno)
	case short:
		err = io.ErrShortWrite
	default:
		return n, nil
	}
	return n, &net.OpError{Op: "write", Net: r.c.LocalAddr().Network(), Source: r.c.LocalAddr(), Addr: r.c.RemoteAddr(), Err: err}
}

// Read reads what the socket holds, up to len(b), in one system call once there is something (0
// and io.EOF at the end of the stream), as net.Conn.Read does.
func (r rawConn) Read(b []byte) (int, error) {
	if r.rc == nil {
		return r.c.Read(b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until there is something to read
			}
			n, errno = m, e
			return true
		}
	})
	switch {
	case err != nil:
	case errno != 0:
		err = os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	default:
		return int(n), nil
	}
	return 0, &net.OpError{Op: "read", Net: r.c.LocalAddr().Network(), Source: r.c.LocalAddr(), Addr: r.c.RemoteAddr(), Err: err}
}

// rawPacketConn is the UDP socket, read and written with raw system calls as rawConn is.
type rawPacketConn struct {
	pc  net.PacketConn
	rc  syscall.RawConn
	fam uint16 // the socket's address family, by its local address
	// names are the senders' addresses as ReadFrom writes them, by their raw socket address: a
	// node hears from a few peers, many times a second each.
	names map[[syscall.SizeofSockaddrInet6]byte]string
}

// newRawPacketConn wraps pc; a PacketConn that is no socket of this process is used as it is.
func newRawPacketConn(pc net.PacketConn) *rawPacketConn {
	r := &rawPacketConn{pc: pc, fam: syscall.AF_INET6}
	if a, ok := pc.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		r.fam = syscall.AF_INET
	}
	if sc, ok := pc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			r.rc = rc
		}
	}
	return r
}

// ReadFrom reads one datagram into b, as net.PacketConn.ReadFrom does; the sender's address is
// written as net.UDPAddr.String writes it.
func (r *rawPacketConn) ReadFrom(b []byte) (int, string, error) {
	if r.rc == nil || len(b) == 0 {
		n, addr, err := r.pc.ReadFrom(b)
		if addr == nil {
			return n, "", err
		}
		return n, addr.String(), err
	}
	var (
		n     uintptr
		errno syscall.Errno
		sa    syscall.RawSockaddrAny
	)
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			salen := uint32(syscall.SizeofSockaddrAny)
			m, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0,
				uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&salen)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait for a datagram
			}
			n, errno = m, e
			return true
		}
	})
	if err == nil && errno != 0 {
		err = os.NewSyscallError("recvfrom", errno)
	}
	if err != nil {
		return 0, "", &net.OpError{Op: "read", Net: r.pc.LocalAddr().Network(), Source: r.pc.LocalAddr(), Err: err}
	}
	return int(n), r.name(&sa), nil
}

// name is sockaddrString(sa), remembered.
func (r *rawPacketConn) name(sa *syscall.RawSockaddrAny) string {
	var k [syscall.SizeofSockaddrInet6]byte
	copy(k[:], (*[syscall.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))[:])
	if s, ok := r.names[k]; ok {
		return s
	}
	if r.names == nil || len(r.names) >= 1024 { // bounded: datagrams come from anyone
		r.names = map[[syscall.SizeofSockaddrInet6]byte]string{}
	}
	s := sockaddrString(sa)
	r.names[k] = s
	return s
}

// sockaddrString writes a sender's address as net.UDPAddr.String does ("" when it is of another
// family).
func sockaddrString(sa *syscall.RawSockaddrAny) string {
	switch sa.Addr.Family {
	case syscall.AF_INET:
		p := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		return (&net.UDPAddr{IP: net.IP(p.Addr[:]), Port: int(ntohs(p.Port))}).String()
	case syscall.AF_INET6:
		p := (*syscall.RawSockaddrInet6)(unsafe.Pointer(sa))
		a := &net.UDPAddr{IP: net.IP(p.Addr[:]), Port: int(ntohs(p.Port))}
		if p.Scope_id != 0 {
			a.Zone = strconv.Itoa(int(p.Scope_id))
			if ifi, err := net.InterfaceByIndex(int(p.Scope_id)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a.String()
	}
	return ""
}

// WriteTo sends b to addr in one datagram, as net.PacketConn.WriteTo does.
func (r *rawPacketConn) WriteTo(b []byte, addr *net.UDPAddr) (int, error) {
	var sa4 syscall.RawSockaddrInet4
	var sa6 syscall.RawSockaddrInet6
	var sa unsafe.Pointer
	var salen uintptr
	switch ip4 := addr.IP.To4(); {
	case r.rc == nil || len(b) == 0 || addr.Zone != "":
		return r.pc.WriteTo(b, addr)
	case ip4 != nil && r.fam == syscall.AF_INET:
		sa4 = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: htons(uint16(addr.Port))}
		copy(sa4.Addr[:], ip4)
		sa, salen = unsafe.Pointer(&sa4), syscall.SizeofSockaddrInet4
	case len(addr.IP) == net.IPv6len && r.fam == syscall.AF_INET6:
		sa6 = syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Port: htons(uint16(addr.Port))}
		copy(sa6.Addr[:], addr.IP)
		sa, salen = unsafe.Pointer(&sa6), syscall.SizeofSockaddrInet6
	default: // a v4 address on a v6 socket, and the like: the net package's rules
		return r.pc.WriteTo(b, addr)
	}
	var n uintptr
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, uintptr(sa), salen)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = m, e
			return true
		}
	})
	if err == nil && errno != 0 {
		err = os.NewSyscallError("sendto", errno)
	}
	if err != nil {
		return 0, &net.OpError{Op: "write", Net: r.pc.LocalAddr().Network(), Source: r.pc.LocalAddr(), Addr: addr, Err: err}
	}
	return int(n), nil
}

func ntohs(p uint16) uint16 { return p<<8 | p>>8 }
func htons(p uint16) uint16 { return p<<8 | p>>8 }
